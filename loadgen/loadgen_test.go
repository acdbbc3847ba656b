package loadgen

import (
	"bytes"
	"encoding/json"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/internal/testdb"
)

func TestReportBodyIsAReportOfEveryDeclaredResource(t *testing.T) {
	d := &hq.Declaration{Node: "n1", Generation: 7, SendID: 42, Signature: "c2ln",
		Modules: []hq.DeclaredModule{{Name: "app", Revision: 3, Resources: moduleResources(3, "app", 1)}}}
	d.Digest = d.ComputeDigest()
	prev := &hq.Declaration{Modules: []hq.DeclaredModule{{Name: "app", Revision: 2, Resources: moduleResources(3, "app", 0)}}}
	var c resultCache
	c.m = map[string][]byte{}
	at := time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC)
	body := ReportBody(d, c.results(prev, d), at, at).Bytes()

	var rep hq.Report
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&rep); err != nil {
		t.Fatalf("%v in %s", err, body)
	}
	if rep.SendID != 42 || rep.Generation != 7 || rep.Digest != d.Digest || rep.Signature != "c2ln" || !rep.StartedAt.Equal(at) {
		t.Fatalf("the report does not name its send: %+v", rep)
	}
	if len(rep.Results) != 3 {
		t.Fatalf("%d results for 3 declared resources", len(rep.Results))
	}
	for i, r := range rep.Results {
		// Only the first file's content depends on the version.
		if r.Module != "app" || r.Resource != d.Modules[0].Resources[i].Name || r.Outcome != hq.StateApplied || !r.Attempted || r.Changed != (i == 0) {
			t.Fatalf("result %d: %+v", i, r)
		}
	}
	// The same pair of declarations gives the same bytes, encoded once.
	if again := c.results(prev, d); &again[0] != &c.results(prev, d)[0] {
		t.Fatal("the results were encoded again")
	}
	if steady := Results(d, nil); bytes.Contains(steady, []byte(`"changed":true`)) {
		t.Fatalf("nothing changed, yet: %s", steady)
	}
}

func TestReportBodyOfNothingApplied(t *testing.T) {
	var rep hq.Report
	if err := json.Unmarshal(ReportBody(nil, []byte("[]"), time.Time{}, time.Time{}).Bytes(), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.SendID != 0 || rep.Generation != 0 || rep.Digest != "" || len(rep.Results) != 0 {
		t.Fatalf("%+v", rep)
	}
}

func TestQuantile(t *testing.T) {
	var ds []time.Duration
	for i := 1; i <= 100; i++ {
		ds = append(ds, time.Duration(i))
	}
	for q, want := range map[float64]time.Duration{0.5: 50, 0.9: 90, 0.99: 99, 1: 100} {
		if got := quantile(ds, q); got != want {
			t.Errorf("quantile %v = %v, want %v", q, got, want)
		}
	}
	if quantile(nil, 0.5) != 0 {
		t.Error("quantile of nothing")
	}
}

func TestReadProcOfItself(t *testing.T) {
	p, err := ReadProc(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if p.RSS <= 0 || p.HWM < p.RSS {
		t.Fatalf("%+v", p)
	}
}

func TestReportWaitsAsTheControllerAsks(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := calls.Add(1)
		// Every attempt sends the whole body, its parts in order, with its length.
		body, _ := io.ReadAll(r.Body)
		if r.Header.Get("Authorization") != "Bearer tok" || r.URL.Path != "/api/v1/nodes/n1/reports" ||
			string(body) != `{"a":1}` || r.ContentLength != 7 {
			http.Error(w, "wrong request", http.StatusBadRequest)
			return
		}
		if n == 1 {
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		w.Write([]byte(`{"report_id":9,"summary":"applied 0 resource(s)","stuck":[],"generation":0}`))
	}))
	defer srv.Close()
	rec := NewRecorder()
	h := NewHost(srv.URL, "n1", "tok", srv.Client(), rec.Observe)
	start := time.Now()
	rr, c, attempts := h.Report(t.Context(), Body{[]byte(`{"a"`), []byte(`:1`), []byte(`}`)}, Retry{Unreachable: time.Millisecond, Shed: time.Millisecond})
	if c.Status != http.StatusOK || rr.ReportID != 9 || attempts != 2 {
		t.Fatalf("status %d, id %d, %d attempt(s): %v", c.Status, rr.ReportID, attempts, c.Err)
	}
	if took := time.Since(start); took < time.Second {
		t.Fatalf("retried after %s, before the second Retry-After asked for", took)
	}
	s := rec.Snapshot()
	if s.Acked != 1 || s.Statuses["report 503"] != 1 || s.Statuses["report 200"] != 1 {
		t.Fatalf("%+v", s)
	}
}

// -polls keeps the long-polls to the first hosts; 0, or more than there are, means all.
func TestPollersAreTheFirstHosts(t *testing.T) {
	for _, c := range []struct{ nodes, polls, want int }{{5, 0, 5}, {5, 2, 2}, {5, 9, 5}, {5, -1, 5}} {
		f := NewFleet(Config{Nodes: c.nodes, Polls: c.polls})
		for range c.nodes {
			f.hosts = append(f.hosts, &fleetHost{})
		}
		if got := f.pollers(); len(got) != c.want || got[0] != f.hosts[0] {
			t.Errorf("%d nodes, -polls %d: %d pollers, want the first %d", c.nodes, c.polls, len(got), c.want)
		}
	}
}

// A phase's tail is told apart from one slow moment: the second half's p99, and the slowest
// second with when it began.
func TestTailsTellAMomentFromThePhase(t *testing.T) {
	var took, done []time.Duration
	for i := range 1000 { // ten seconds, 100 requests each, 2 ms, but 50 of the second second at 900 ms
		at := time.Duration(i) * 10 * time.Millisecond
		d := 2 * time.Millisecond
		if at >= time.Second && at < 1500*time.Millisecond {
			d = 900 * time.Millisecond
		}
		took, done = append(took, d), append(done, at)
	}
	late, worst, at := tails(took, done)
	if late != 2*time.Millisecond || worst != 900*time.Millisecond || at != time.Second {
		t.Errorf("second half p99 %s, slowest second %s at %s; want 2ms, 900ms at 1s", late, worst, at)
	}
	if late, worst, at := tails(nil, nil); late != 0 || worst != 0 || at != 0 {
		t.Errorf("no requests: %s %s %s", late, worst, at)
	}
	if got, want := windows(took, done, 5*time.Second), []time.Duration{900 * time.Millisecond, 2 * time.Millisecond}; !slices.Equal(got, want) {
		t.Errorf("p99 by 5 s: %v, want %v", got, want)
	}
	if got := windows(nil, nil, time.Second); got != nil {
		t.Errorf("no requests, by the second: %v", got)
	}
}

// Hosts that applied the same module revisions keep one copy of their resources, and each its
// own send, generation and digest; another revision is kept apart.
func TestHostsShareTheResourcesTheyDeclare(t *testing.T) {
	c := resultCache{m: map[string][]byte{}, modules: map[string][]hq.DeclaredModule{}}
	decl := func(node string, send, rev int64) *hq.Declaration {
		return &hq.Declaration{Node: node, Generation: 2, SendID: send, Digest: node + "-digest",
			Modules: []hq.DeclaredModule{{Name: "app", Revision: rev, Resources: []hq.Resource{{Name: "f1", Kind: hq.KindFile, Path: "/f1"}}}}}
	}
	a, b, next := c.share(decl("a", 1, 1)), c.share(decl("b", 2, 1)), c.share(decl("c", 3, 2))
	if &a.Modules[0] != &b.Modules[0] {
		t.Fatal("two hosts at the same revision each kept their own resources")
	}
	if b.Node != "b" || b.SendID != 2 || b.Digest != "b-digest" {
		t.Fatalf("the shared declaration lost its host's own fields: %+v", b)
	}
	if &next.Modules[0] == &a.Modules[0] || next.Modules[0].Revision != 2 {
		t.Fatal("another revision was given the first revision's resources")
	}
}

// buildHQ builds cmd/hq into a temporary directory and returns the binary's path.
func buildHQ(t *testing.T) string {
	t.Helper()
	// go test caches a pass by the files the test itself opens or stats; the build reads the
	// module's sources in another process, so without this a change to hq would replay a
	// stale pass.
	filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() && (d.Name() == ".git" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		switch filepath.Ext(path) {
		case ".go", ".sql", ".html", ".css", ".mod", ".sum":
			os.Stat(path)
		}
		return nil
	})
	bin := filepath.Join(t.TempDir(), "hq")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/hq")
	cmd.Dir = ".."
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/hq: %v\n%s", err, out)
	}
	return bin
}

// Two controllers on one SQLite file: each host speaks to its own, so both answer its
// registrations, declarations and reports, while the operator's calls go to the first; a
// module uploaded to the first reaches the hosts of the second; and each phase's CPU is the
// sum of the two.
func TestFleetSplitsHostsAcrossControllers(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs hq")
	}
	dir := t.TempDir()
	ctls := startTwo(t, dir)
	cfg := Config{Token: "loadgen-test-token", DB: ctls[0].DB, Nodes: 20, Resources: 3, Prefix: "lgt-", Module: "lgt",
		SteadyRate: 40, SteadyFor: time.Second, Concurrency: 4, Wait: 5 * time.Second, PhaseTimeout: 30 * time.Second,
		Phases: []string{PhaseSteady, PhaseRevision}}
	for _, c := range ctls {
		cfg.URLs, cfg.Pids = append(cfg.URLs, c.URL), append(cfg.Pids, c.Pid())
	}
	var results []PhaseResult
	if err := NewFleet(cfg).Run(t.Context(), func(r PhaseResult) { results = append(results, r) }); err != nil {
		t.Fatal(err)
	}
	var phases []string
	cpu := make([]time.Duration, 2)
	for _, r := range results {
		phases = append(phases, r.Phase)
		if len(r.Controllers) != 2 || r.Controllers[0].URL != cfg.URLs[0] || r.Controllers[1].Pid != cfg.Pids[1] {
			t.Fatalf("%s: controllers %+v", r.Phase, r.Controllers)
		}
		var sum time.Duration
		acked, requests := 0, 0
		for i, c := range r.Controllers {
			sum, acked, requests = sum+c.CPU, acked+c.Acked, requests+c.Requests
			cpu[i] += c.CPU
		}
		if !r.hasProc || r.CPU != sum || acked != r.Acked || requests != r.Requests {
			t.Errorf("%s: cpu %s, %d acked, %d requests; the controllers' sum to %s, %d, %d", r.Phase, r.CPU, r.Acked, r.Requests, sum, acked, requests)
		}
		if !strings.Contains(r.Line(), "2 controllers cpu") || !strings.Contains(r.Line(), "; #2 cpu") {
			t.Errorf("%s: the line does not give both controllers: %s", r.Phase, r.Line())
		}
		ctl := r.Controllers
		switch r.Phase {
		case PhaseRegister:
			if ctl[0].Requests != 10 || ctl[1].Requests != 10 {
				t.Errorf("register: %d and %d registrations, want 10 each", ctl[0].Requests, ctl[1].Requests)
			}
		case PhaseAssign:
			if ctl[1].Requests != 0 {
				t.Errorf("assign: the second controller answered %d operator call(s)", ctl[1].Requests)
			}
		case PhaseApply, PhaseSteady, PhaseRevision:
			if ctl[0].Acked == 0 || ctl[1].Acked == 0 {
				t.Errorf("%s: %d and %d reports acknowledged; hosts were not split", r.Phase, ctl[0].Acked, ctl[1].Acked)
			}
		}
		if r.Phase == PhaseSteady && (r.LateReports <= 0 || r.LateReports > r.Count) {
			t.Errorf("steady: %d of its %d reports counted in its second half", r.LateReports, r.Count)
		}
	}
	if want := []string{PhaseRegister, PhaseAssign, PhaseApply, PhaseSteady, PhaseRevision}; !slices.Equal(phases, want) {
		t.Fatalf("phases %v, want %v", phases, want)
	}
	if cpu[0] <= 0 || cpu[1] <= 0 {
		t.Errorf("controllers' CPU over the run: %v", cpu)
	}
	// Each its own log; one signing key, made by the first and read by the second.
	for _, f := range []string{"hq.log", "hq-2.log", "hq.db.key"} {
		if FileSize(filepath.Join(dir, f)) == 0 {
			t.Errorf("no %s", f)
		}
	}
	// One signing key and one secrets key, both made by the first and read by the second.
	keys, _ := filepath.Glob(filepath.Join(dir, "*.key"))
	if want := []string{filepath.Join(dir, "hq.db.key"), filepath.Join(dir, "hq.db.secrets.key")}; !slices.Equal(keys, want) {
		t.Errorf("keys %v, want %v", keys, want)
	}
}

// startTwo starts two controllers of a fresh build in dir, with the token
// "loadgen-test-token", stopped when the test ends.
func startTwo(t *testing.T, dir string, env ...string) []*Controller {
	t.Helper()
	ctls, err := StartControllers(buildHQ(t), dir, 2, []string{"127.0.0.1:0"}, "loadgen-test-token", env...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		var wg sync.WaitGroup
		for _, c := range ctls {
			wg.Go(c.Stop)
		}
		wg.Wait()
	})
	return ctls
}

// With one controller the line and the JSON are as they were: no share of each, and the
// controller's CPU per operation beside its total.
func TestLineOfOneControllerAndOfTwo(t *testing.T) {
	one := PhaseResult{Phase: PhaseSteady, Wall: 2 * time.Second, Count: 400, Unit: "reports/s", CPU: time.Second, Cores: 0.5, DBCPU: 200 * time.Millisecond, hasProc: true}
	if l := one.Line(); !strings.Contains(l, "| cpu 1.00s 0.50 cores 2.50ms/report, rss") || !strings.Contains(l, "| db server cpu 0.20s 0.50ms/report") || strings.Contains(l, "#1") {
		t.Errorf("one controller: %s", l)
	}
	if b, _ := json.Marshal(one); bytes.Contains(b, []byte(`"controllers"`)) {
		t.Errorf("one controller's JSON lists controllers: %s", b)
	}
	two := one
	two.Controllers = []ControllerResult{
		{URL: "http://a", CPU: 600 * time.Millisecond, RSS: 1 << 20, HWM: 2 << 20, Requests: 210, Acked: 200, hasProc: true},
		{URL: "http://b", CPU: 400 * time.Millisecond, RSS: 1 << 20, HWM: 2 << 20, Requests: 200, Acked: 200, hasProc: true},
	}
	want := "| 2 controllers cpu 1.00s 0.50 cores 2.50ms/report, rss 0.0MB peak 0.0MB | #1 cpu 0.60s rss 1.0MB peak 2.0MB, 210 req 200 acked; #2 cpu 0.40s rss 1.0MB peak 2.0MB, 200 req 200 acked |"
	if l := two.Line(); !strings.Contains(l, want) {
		t.Errorf("two controllers:\n%s\nwant in it\n%s", l, want)
	}
}

// A phase of reports gives the CPU of its second half apart, per report of that half; the
// controllers' CPU between two samples is had only when both sampled every controller.
func TestSecondHalfCPU(t *testing.T) {
	r := PhaseResult{Phase: PhaseSteady, Wall: 2 * time.Second, Count: 400, Unit: "reports/s", CPU: time.Second, Cores: 0.5,
		LateCPU: 90 * time.Millisecond, LateReports: 200, hasProc: true}
	if l := r.Line(); !strings.Contains(l, "| cpu 1.00s 0.50 cores 2.50ms/report (second half 0.45ms/report), rss") {
		t.Errorf("line: %s", l)
	}
	r.LateReports = 0
	if l := r.Line(); strings.Contains(l, "(second half") {
		t.Errorf("a phase without a second half sampled: %s", l)
	}
	a, b := &Proc{CPU: time.Second}, &Proc{CPU: 3 * time.Second}
	if cpu, ok := cpuBetween([]*Proc{a, a}, []*Proc{b, b}); !ok || cpu != 4*time.Second {
		t.Errorf("two controllers: %s %v, want 4s", cpu, ok)
	}
	if _, ok := cpuBetween([]*Proc{a, nil}, []*Proc{b, b}); ok {
		t.Error("a controller missed at the midpoint was left out of the sum")
	}
	if _, ok := cpuBetween([]*Proc{a}, []*Proc{nil}); ok {
		t.Error("a controller missed at the end was left out of the sum")
	}
}

// The write-ahead log position moves on with what is written, so two readings bound a
// phase's log.
func TestWALPositionMovesWithWrites(t *testing.T) {
	testdb.NeedServer(t)
	ctx := t.Context()
	url := testdb.NewOn(t, "postgres")
	before, err := WALPosition(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE TABLE wal_test (v text); INSERT INTO wal_test SELECT repeat('x', 1000) FROM generate_series(1, 1000)"); err != nil {
		t.Fatal(err)
	}
	after, err := WALPosition(ctx, url)
	if err != nil || after-before < 1<<20 {
		t.Fatalf("the log moved %d bytes over 1 MB written (%v)", after-before, err)
	}
	if _, err := WALPosition(ctx, ""); err == nil {
		t.Fatal("a position without a database")
	}
}
