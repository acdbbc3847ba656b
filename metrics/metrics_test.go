package metrics

import (
	"context"
	"io"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/db"
	"github.com/meshhq/hq/db/driver"
	"github.com/meshhq/hq/internal/testdb"
	"github.com/meshhq/hq/internal/teststore"
	"github.com/meshhq/hq/internal/wait"
)

func TestMetricsPage(t *testing.T) {
	ctx := context.Background()
	store := teststore.Open(t, db.Options{})
	for _, n := range []string{"a", "b"} {
		if _, _, err := store.CreateNode(ctx, n); err != nil {
			t.Fatal(err)
		}
	}
	// Two reports of c that say the same: on PostgreSQL the first is a settled first apply and
	// the second a repeat, each taken in one statement.
	if _, _, err := store.CreateNode(ctx, "c"); err != nil {
		t.Fatal(err)
	}
	if _, err := store.PutModule(ctx, "app", []hq.Resource{{Name: "conf", Kind: hq.KindFile, Path: "/etc/app.conf", Content: "x\n"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := store.Assign(ctx, "c", "app", nil, nil); err != nil {
		t.Fatal(err)
	}
	d, err := store.Compose(ctx, "c", "test")
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		rep := hq.Report{SendID: d.SendID, Generation: d.Generation, Digest: d.Digest,
			Results: []hq.Result{{Module: "app", Resource: "conf", Outcome: hq.StateApplied, Attempted: true}}}
		if _, err := store.Ingest(ctx, "c", rep, db.IngestOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	m := New(store, fakeServer{shed: 7, waiting: 3, deferred: 4, polling: 2, unread: 5, held: 6, throttled: 8}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	m.ObserveReport(true, 3*time.Millisecond)
	m.ObserveReport(true, 4*time.Millisecond)
	m.ObserveReport(false, time.Millisecond)
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	p := expfmt.NewTextParser(model.UTF8Validation)
	families, err := p.TextToMetricFamilies(strings.NewReader(rec.Body.String()))
	if err != nil {
		t.Fatalf("%v in\n%s", err, rec.Body)
	}
	values := Flatten(families)
	value := func(name, label, want string) float64 {
		t.Helper()
		key := name
		if label != "" {
			key += "{" + label + "=" + want + "}"
		}
		v, ok := values[key]
		if !ok {
			t.Fatalf("no %s in\n%s", key, rec.Body)
		}
		return v
	}
	if got := value("hq_nodes", "status", "new"); got != 2 {
		t.Errorf("hq_nodes{status=new} = %v, want 2", got)
	}
	if got := value("hq_nodes", "status", "converged"); got != 1 {
		t.Errorf("hq_nodes{status=converged} = %v, want 1", got)
	}
	if got := value("hq_nodes", "status", "stuck"); got != 0 {
		t.Errorf("hq_nodes{status=stuck} = %v, want 0 (every status is present)", got)
	}
	if got := value("hq_reports_throttled_total", "", ""); got != 8 {
		t.Errorf("hq_reports_throttled_total = %v, want 8", got)
	}
	if got := value("hq_reports_shed_total", "", ""); got != 7 {
		t.Errorf("shed = %v, want 7", got)
	}
	if got := value("hq_long_polls_waiting", "", ""); got != 3 {
		t.Errorf("long-polls waiting = %v, want 3", got)
	}
	if got := value("hq_reports_unread_total", "", ""); got != 5 {
		t.Errorf("reports unread = %v, want 5", got)
	}
	if got := value("hq_declarations_held_total", "", ""); got != 6 {
		t.Errorf("declarations held = %v, want 6", got)
	}
	if got, want := value("hq_reports_one_statement_total", "", ""), 2*float64(driver.Flag(testdb.Postgres())); got != want {
		t.Errorf("reports in one statement = %v, want %v", got, want)
	}
	// The first report is the first apply; the second repeats it.
	if got, want := value("hq_reports_steady_one_read_total", "", ""), float64(1-driver.Flag(testdb.Postgres())); got != want {
		t.Errorf("steady reports in one read = %v, want %v", got, want)
	}
	if got := value("hq_hosts_polling", "", ""); got != 2 {
		t.Errorf("hosts polling = %v, want 2", got)
	}
	if got := value("hq_long_polls_deferred_total", "", ""); got != 4 {
		t.Errorf("long-polls deferred = %v, want 4", got)
	}
	if got := value("hq_reports_received_total", "", ""); got != 2 {
		t.Errorf("received = %v, want 2", got)
	}
	if got := value("hq_reports_refused_total", "", ""); got != 1 {
		t.Errorf("refused = %v, want 1", got)
	}
	if h := families["hq_report_ingest_seconds"].Metric[0].Histogram; h.GetSampleCount() != 3 {
		t.Errorf("ingest histogram counts %d, want 3", h.GetSampleCount())
	}
	if value("hq_database_bytes", "file", "db") <= 0 {
		t.Error("hq_database_bytes{file=db} is 0")
	}
	for _, name := range []string{"go_goroutines", "process_resident_memory_bytes", "hq_resources", "hq_stuck_resources", "hq_sends"} {
		if _, ok := families[name]; !ok {
			t.Errorf("no %s", name)
		}
	}
}

// A rollout under way is counted by state, and its nodes by their state in it.
func TestMetricsCountRollouts(t *testing.T) {
	ctx := context.Background()
	store := teststore.Open(t, db.Options{})
	conf := func(content string) []hq.Resource {
		return []hq.Resource{{Name: "conf", Kind: hq.KindFile, Path: "/etc/conf", Content: content}}
	}
	if _, err := store.PutModule(ctx, "app", conf("1")); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"web-1", "web-2", "web-3"} {
		if _, _, err := store.CreateLabelledNode(ctx, n, map[string]string{"role": "web"}); err != nil {
			t.Fatal(err)
		}
	}
	policy := &hq.RolloutPolicy{Canary: 1, MaxUnavailable: hq.Amount{N: 1}}
	if _, err := store.PutPlacement(ctx, hq.Placement{Name: "web", Module: "app", Selector: "role=web", Rollout: policy}); err != nil {
		t.Fatal(err)
	}
	if _, err := store.PutModule(ctx, "app", conf("2")); err != nil {
		t.Fatal(err)
	}
	m := New(store, fakeServer{}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	var values map[string]float64
	wait.For(t, 10*time.Second, "one progressing rollout over three nodes", func() bool {
		rec := httptest.NewRecorder()
		m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
		p := expfmt.NewTextParser(model.UTF8Validation)
		families, err := p.TextToMetricFamilies(strings.NewReader(rec.Body.String()))
		if err != nil {
			t.Fatalf("%v in\n%s", err, rec.Body)
		}
		values = Flatten(families)
		nodes := 0.0
		for _, st := range []string{hq.RolloutNodePending, hq.RolloutNodeInFlight, hq.RolloutNodeDone, hq.RolloutNodeFailed} {
			nodes += values["hq_rollout_nodes{module=app,placement=web,rollout=1,state="+st+"}"]
		}
		return values["hq_rollouts{state=progressing}"] == 1 && nodes == 3
	})
	for _, st := range []hq.RolloutState{hq.RolloutPaused, hq.RolloutComplete, hq.RolloutAborted} {
		if v, ok := values["hq_rollouts{state="+string(st)+"}"]; !ok || v != 0 {
			t.Errorf("hq_rollouts{state=%s} = %v (present %v), want 0: every state is present", st, v, ok)
		}
	}
}

// fakeServer stands for the API server's counters, which the API's own tests hold true.
type fakeServer struct {
	shed, deferred, unread, held, throttled int64
	waiting, polling                        int
}

func (f fakeServer) Shed() int64      { return f.shed }
func (f fakeServer) Waiting() int     { return f.waiting }
func (f fakeServer) Deferred() int64  { return f.deferred }
func (f fakeServer) Polling() int     { return f.polling }
func (f fakeServer) Unread() int64    { return f.unread }
func (f fakeServer) Held() int64      { return f.held }
func (f fakeServer) Throttled() int64 { return f.throttled }
