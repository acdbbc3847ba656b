package loadgen

import (
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/meshhq/hq/internal/testdb"
)

func TestHostTurnsToTheNextControllerWhenNobodyAnswers(t *testing.T) {
	dead := httptest.NewServer(http.NotFoundHandler())
	dead.Close()
	live := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"report_id":9,"summary":"applied 0 resource(s)","stuck":[],"generation":0}`))
	}))
	defer live.Close()
	h := NewHostOf([]string{dead.URL, live.URL}, 0, "n1", "tok", live.Client(), nil)
	rr, c, attempts := h.Report(t.Context(), Body{[]byte(`{}`)}, Retry{Unreachable: time.Millisecond, Shed: time.Millisecond})
	if c.Status != http.StatusOK || rr.ReportID != 9 || attempts != 2 || c.Controller != 1 {
		t.Fatalf("status %d, id %d, %d attempt(s), answered by #%d: %v", c.Status, rr.ReportID, attempts, c.Controller+1, c.Err)
	}
	if at, by := h.Answered(); h.Controller() != 1 || by != 1 || at.IsZero() || h.Acks() != 1 {
		t.Fatalf("the host speaks to #%d, was answered by #%d at %v, %d acknowledged", h.Controller()+1, by+1, at, h.Acks())
	}
}

// The failover phase kills the first of two controllers while the fleet reports; its hosts
// turn to the second. On PostgreSQL every acknowledged report is found in the database.
func TestFailoverKillsTheFirstControllerAndItsHostsMove(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs hq")
	}
	dir := t.TempDir()
	var env []string
	if testdb.Postgres() {
		env = []string{"HQ_DB=" + testdb.NewOn(t, "postgres"), "HQ_KEY_FILE=" + filepath.Join(dir, "hq.key"), "HQ_SECRETS_KEY_FILE=" + filepath.Join(dir, "hq.secrets.key")}
	}
	ctls := startTwo(t, dir, env...)
	cfg := Config{Token: "loadgen-test-token", Nodes: 20, Resources: 3, Prefix: "lgf-", Module: "lgf",
		SteadyRate: 40, SteadyFor: 4 * time.Second, Concurrency: 4, Wait: 5 * time.Second, PhaseTimeout: 30 * time.Second,
		Phases: []string{PhaseFailover}, Kill: func(ctl int) error { ctls[ctl].Kill(); return nil }}
	if testdb.Postgres() {
		cfg.Postgres = strings.TrimPrefix(env[0], "HQ_DB=")
	}
	for _, c := range ctls {
		cfg.URLs, cfg.Pids = append(cfg.URLs, c.URL), append(cfg.Pids, c.Pid())
	}
	var last PhaseResult
	if err := NewFleet(cfg).Run(t.Context(), func(r PhaseResult) { last = r }); err != nil {
		t.Fatal(err)
	}
	fo := last.Failover
	if last.Phase != PhaseFailover || fo == nil {
		t.Fatalf("last phase %s, failover %+v", last.Phase, fo)
	}
	// Each host reports every half second and retries a second after nobody answered.
	if fo.Killed != 1 || fo.Hosts != 10 || fo.Moved != 10 || fo.Slowest <= 0 || fo.Slowest > 3*time.Second {
		t.Fatalf("failover: %+v", *fo)
	}
	if ctls[0].cmd.ProcessState == nil {
		t.Fatal("the first controller still runs")
	}
	if fo.Checked != testdb.Postgres() || (fo.Checked && (fo.Lost != 0 || fo.Acked < int64(last.Count))) {
		t.Fatalf("reports counted in the database: %+v, %d acknowledged in the phase", *fo, last.Count)
	}
	if !strings.Contains(last.Line(), "controller #1 killed: 10 of its 10 host(s)") {
		t.Fatalf("line: %s", last.Line())
	}
}
