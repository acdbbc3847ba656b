package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	_ "modernc.org/sqlite" // the campaigns read the controller's database themselves

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/internal/testdb"
	"github.com/meshhq/hq/loadgen"
)

// Crash campaigns: a process killed with SIGKILL again and again under load, and after every
// kill the invariants that must survive a crash checked from outside. The default is a few
// rounds, quick enough for every CI run; HQ_CAMPAIGN=long runs a hundred (docs/testing.md).

// campaignRounds is how many times a campaign kills its process.
func campaignRounds(t *testing.T) int {
	t.Helper()
	switch v := os.Getenv("HQ_CAMPAIGN"); v {
	case "":
		return 5
	case "long":
		return 100
	default:
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("HQ_CAMPAIGN=%q: want long or a number of rounds", v)
		}
		return n
	}
}

// ackedReport is a report the controller answered with 200: it must be in the database.
type ackedReport struct {
	id      int64
	summary string
}

// reportingHost posts reports without pause, alternating a failing and an applied outcome so
// that every report writes rows, and keeps what the controller acknowledged.
type reportingHost struct {
	*loadgen.Host
	bodies [2]loadgen.Body
	mu     sync.Mutex
	acked  []ackedReport
	// refused is the first answer that was neither a 200 nor one to retry.
	refused string
}

func (h *reportingHost) run(ctx context.Context) {
	retry := loadgen.Retry{Unreachable: 20 * time.Millisecond, Shed: 100 * time.Millisecond}
	for i := 0; ctx.Err() == nil; i++ {
		rr, c, _ := h.Report(ctx, h.bodies[i%2], retry)
		switch {
		case c.Err == nil && c.Status == http.StatusOK:
			h.mu.Lock()
			h.acked = append(h.acked, ackedReport{rr.ReportID, rr.Summary})
			h.mu.Unlock()
		case ctx.Err() != nil:
		default:
			h.mu.Lock()
			if h.refused == "" {
				h.refused = fmt.Sprintf("%d %v", c.Status, c.Err)
			}
			h.mu.Unlock()
			return
		}
	}
}

func (h *reportingHost) snapshot() ([]ackedReport, string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]ackedReport(nil), h.acked...), h.refused
}

// campaignModule has a file that always applies and one the hosts say fails every other time.
func campaignModule() []hq.Resource {
	return []hq.Resource{
		{Name: "steady", Kind: hq.KindFile, Path: "/etc/campaign/steady.conf", Content: "steady\n"},
		{Name: "flaky", Kind: hq.KindFile, Path: "/etc/campaign/flaky.conf", Content: "flaky\n"},
	}
}

func campaignBodies(d *hq.Declaration) [2]loadgen.Body {
	enc := func(flakyFails bool) loadgen.Body {
		rs := []hq.Result{{Module: "app", Resource: "steady", Outcome: hq.StateApplied, Attempted: true}}
		flaky := hq.Result{Module: "app", Resource: "flaky", Outcome: hq.StateApplied, Attempted: true, Changed: true}
		if flakyFails {
			flaky.Outcome, flaky.Changed, flaky.Error = hq.StateFailed, false, "validate: exit status 1"
		}
		b, _ := json.Marshal(append(rs, flaky))
		now := time.Now().UTC()
		return loadgen.ReportBody(d, b, now, now)
	}
	return [2]loadgen.Body{enc(true), enc(false)}
}

// dbCheck is what the database says after a kill.
type dbCheck struct {
	integrity string
	rows      int
	// counted is rows plus their repeats: how many reports the rows stand for.
	counted int
}

// checkDatabase opens the database as an operator would, checks a SQLite file's integrity, and that every acknowledged report is there: each acknowledged id has its row with
// the summary the host was answered, and a node's rows with their repeats account for at least
// as many reports as were acknowledged to it.
func checkDatabase(t *testing.T, path string, hosts []*reportingHost) dbCheck {
	t.Helper()
	db := openRaw(t, path)
	ck := dbCheck{integrity: "ok"}
	// PostgreSQL checks its own pages; a SQLite file is checked as an operator would.
	if testdb.Driver(path) == "sqlite" {
		rows, err := db.Query("PRAGMA integrity_check")
		if err != nil {
			t.Fatalf("integrity_check: %v", err)
		}
		var lines []string
		for rows.Next() {
			var s string
			rows.Scan(&s)
			lines = append(lines, s)
		}
		rows.Close()
		if ck.integrity = strings.Join(lines, "; "); ck.integrity != "ok" {
			t.Fatalf("PRAGMA integrity_check: %s", ck.integrity)
		}
	}
	type nodeRows struct {
		summaries map[int64]string
		counted   int
	}
	byNode := map[string]*nodeRows{}
	rows, err := db.Query("SELECT node, id, summary, repeats FROM reports")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var node, summary string
		var id, repeats int64
		if err := rows.Scan(&node, &id, &summary, &repeats); err != nil {
			t.Fatal(err)
		}
		n := byNode[node]
		if n == nil {
			n = &nodeRows{summaries: map[int64]string{}}
			byNode[node] = n
		}
		n.summaries[id] = summary
		n.counted += 1 + int(repeats)
		ck.rows++
		ck.counted += 1 + int(repeats)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	rows.Close()
	for _, h := range hosts {
		acked, _ := h.snapshot()
		n := byNode[h.Name]
		if n == nil {
			n = &nodeRows{}
		}
		for _, a := range acked {
			summary, ok := n.summaries[a.id]
			if !ok {
				t.Fatalf("%s: report %d (%q) was acknowledged but is not in the database", h.Name, a.id, a.summary)
			}
			if summary != a.summary {
				t.Fatalf("%s: report %d was acknowledged as %q but its row says %q", h.Name, a.id, a.summary, summary)
			}
		}
		if n.counted < len(acked) {
			t.Fatalf("%s: %d report(s) acknowledged, but its rows and their repeats count %d", h.Name, len(acked), n.counted)
		}
	}
	return ck
}

func TestCampaignControllerKilledUnderReports(t *testing.T) {
	rounds := campaignRounds(t)
	began := time.Now()
	path := testdb.New(t)
	addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	env := []string{"HQ_STUCK_ATTEMPTS=1000"}
	ctl := startControllerAt(t, path, addr, env...)
	c := newClient(t, ctl.url)
	c.putModule("app", campaignModule()...)

	const nodes = 24
	tr := loadgen.NewTransport(2 * nodes)
	tr.TLSClientConfig = suiteTLS()
	client := &http.Client{Transport: tr}
	defer client.CloseIdleConnections()
	hosts := make([]*reportingHost, nodes)
	for i := range hosts {
		name := fmt.Sprintf("n%02d", i)
		token := c.register(name)
		c.assign(name, "app", false)
		h := loadgen.NewHost(ctl.url, name, token, client, nil)
		d, call := h.Declaration(t.Context(), -1, 0)
		if d == nil {
			t.Fatalf("%s: no declaration: %d %v", name, call.Status, call.Err)
		}
		hosts[i] = &reportingHost{Host: h, bodies: campaignBodies(d)}
	}
	ctx, stop := context.WithCancel(t.Context())
	var running sync.WaitGroup
	for _, h := range hosts {
		running.Go(func() { h.run(ctx) })
	}
	defer func() { stop(); running.Wait() }()

	total := func() int {
		n := 0
		for _, h := range hosts {
			acked, refused := h.snapshot()
			if refused != "" {
				t.Fatalf("%s: a report was refused: %s", h.Name, refused)
			}
			n += len(acked)
		}
		return n
	}
	var last dbCheck
	for round := 1; round <= rounds; round++ {
		// Reports land for a while, then the controller dies wherever it is in a commit.
		before := total()
		waitFor(t, 20*time.Second, fmt.Sprintf("round %d: reports acknowledged", round), func() bool { return total() >= before+2*nodes })
		time.Sleep(time.Duration(rand.IntN(300)) * time.Millisecond)
		ctl.kill()
		last = checkDatabase(t, path, hosts)
		ctl = startControllerAt(t, path, addr, env...)
	}
	// Once more with the hosts stopped, so that everything they were told counts.
	before := total()
	waitFor(t, 20*time.Second, "reports acknowledged after the last restart", func() bool { return total() >= before+2*nodes })
	stop()
	running.Wait()
	ctl.kill()
	last = checkDatabase(t, path, hosts)
	t.Logf("%d kill(s) of the controller under reports from %d hosts in %s: %d report(s) acknowledged, %d row(s) standing for %d report(s), integrity_check ok after every kill",
		rounds, nodes, time.Since(began).Round(100*time.Millisecond), total(), last.rows, last.counted)
}

// pairRE is a pair the pair server serves.
var pairRE = regexp.MustCompile(`^A(\d+)\|B(\d+)$`)

func TestCampaignHostdKilledMidGroup(t *testing.T) {
	rounds := campaignRounds(t)
	began := time.Now()
	ctl := startController(t, testdb.New(t))
	c := newClient(t, ctl.url)
	token := c.register("n1")
	dir := t.TempDir()
	root, state := filepath.Join(dir, "root"), filepath.Join(dir, "state")
	os.MkdirAll(root, 0o755)
	t.Cleanup(func() { killStrays(t, root) })
	// The server has a health check: hostd then knows it has read its pair before it commits
	// the next one. Without one it is deemed started after a moment, and on a loaded machine a
	// server started by one reconcile can read its files midway through the next.
	addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	pair := func(i int) []hq.Resource {
		return groupModule(fmt.Sprintf("A%d", i), fmt.Sprintf("B%d", i), "http://"+addr+"/healthz", "-addr", addr)
	}

	h := startHost(t, ctl.url, "n1", token, root, state)
	c.putModule("app", pair(0)...)
	c.assign("n1", "app", false)
	waitFor(t, 20*time.Second, "n1 converged", func() bool { return groupConverged(c, "n1")() && serving(h) == "A0|B0" })

	// One observer for the whole campaign: whatever hostd does, the server serves a whole pair.
	w := watchPair(&host{root: root})
	const failpoint = "failpoint: paused between group commits"
	for round := 1; round <= rounds; round++ {
		h.stop()
		// A hostd that pauses between the two commits of a group, killed in the pause.
		h = startHost(t, ctl.url, "n1", token, root, state, "HOSTD_FAILPOINT_GROUP_COMMIT_PAUSE=1m")
		waitFor(t, 20*time.Second, fmt.Sprintf("round %d: hostd running", round), func() bool {
			return strings.Contains(h.out.String(), "hostd running")
		})
		c.putModule("app", pair(round)...)
		waitFor(t, 20*time.Second, fmt.Sprintf("round %d: the failpoint", round), func() bool {
			return strings.Contains(h.out.String(), failpoint)
		})
		h.kill()
		a, b := pairOnDisk(h, "a.conf"), pairOnDisk(h, "b.conf")
		if a != fmt.Sprintf("A%d\n", round) || b != fmt.Sprintf("B%d\n", round-1) {
			t.Fatalf("round %d: killed between commits, a %q and b %q are not the half-committed pair", round, a, b)
		}
		if _, err := os.Stat(filepath.Join(state, "group-journal.json")); err != nil {
			t.Fatalf("round %d: no journal after a kill between commits: %v", round, err)
		}

		// Restarted, it rolls the group back before anything else, then applies it whole.
		h = startHost(t, ctl.url, "n1", token, root, state)
		want := fmt.Sprintf("A%d|B%d", round, round)
		waitFor(t, 30*time.Second, fmt.Sprintf("round %d: n1 converged on %s", round, want), func() bool {
			return groupConverged(c, "n1")() && serving(h) == want
		})
		out := h.out.String()
		rolled, running := strings.Index(out, "rolled back a group interrupted before its last commit"), strings.Index(out, "hostd running")
		if rolled < 0 || running < 0 || rolled > running {
			t.Fatalf("round %d: the rollback (at %d) did not come before hostd ran (at %d):\n%s", round, rolled, running, out)
		}
		if a, b := pairOnDisk(h, "a.conf"), pairOnDisk(h, "b.conf"); a != fmt.Sprintf("A%d\n", round) || b != fmt.Sprintf("B%d\n", round) {
			t.Fatalf("round %d: converged with a %q and b %q on disk", round, a, b)
		}
		noGroupLeftovers(t, h)
		if bad := w.mixed(); bad != "" {
			t.Fatalf("round %d: %s", round, bad)
		}
	}
	var allowed []string
	for i := 0; i <= rounds; i++ {
		allowed = append(allowed, fmt.Sprintf("A%d|B%d", i, i))
	}
	seen := w.counts()
	w.end(t, allowed...)
	t.Logf("%d kill(s) of hostd between the commits of a group in %s: rolled back and applied whole every time; the observer read the pair %d time(s) and never saw a mixed one",
		rounds, time.Since(began).Round(100*time.Millisecond), seen)
}

// mixed names a pair the observer saw whose A and B are of different revisions, or "".
func (w *pairWatch) mixed() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	for s, n := range w.seen {
		m := pairRE.FindStringSubmatch(s)
		if m == nil || m[1] != m[2] {
			return fmt.Sprintf("the observer saw %q %d time(s) (all seen: %v)", s, n, w.seen)
		}
	}
	return ""
}

// counts is how many answers the observer has had.
func (w *pairWatch) counts() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for _, v := range w.seen {
		n += v
	}
	return n
}

// killStrays kills the processes left running with root in their command line (services of a
// hostd that was killed), and says how many there were.
func killStrays(t *testing.T, root string) {
	es, _ := os.ReadDir("/proc")
	n := 0
	for _, e := range es {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || !strings.Contains(string(cmdline), root+"/") {
			continue
		}
		if p, err := os.FindProcess(pid); err == nil && p.Kill() == nil {
			n++
		}
	}
	if n > 0 {
		t.Logf("killed %d process(es) still running under %s", n, root)
	}
}
