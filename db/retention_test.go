package db

import (
	"context"
	"github.com/meshhq/hq/internal/testdb"
	"testing"
	"time"
)

// Retention prunes history older than its age, window by window, but keeps every node's
// newest rows of each table however old they are.
func TestPruneKeepsTheNewestRowsPerNode(t *testing.T) {
	t.Parallel()
	s, clock := setupWith(t, Options{StuckAttempts: 1000})
	ctx := context.Background()
	for _, n := range []string{"busy", "quiet"} {
		mustNode(t, s, n)
	}
	mustModule(t, s, "app", file("a", "1"))
	mustAssign(t, s, "busy", "app")
	mustAssign(t, s, "quiet", "app")
	// The trigger dates a change whose since did not move by SQLite's clock, not the test's.
	clock.Advance(time.Minute)
	quiet := mustCompose(t, s, "quiet", "test")
	ingest(t, s, "quiet", quiet, applied("app", "a")...)
	// The busy node flips between failed and applied: two transitions and a report each time.
	for i := range 120 {
		d, err := s.Compose(ctx, "busy", "test")
		if err != nil {
			t.Fatal(err)
		}
		if i%2 == 0 {
			ingest(t, s, "busy", d, failing("app", "a"))
		} else {
			ingest(t, s, "busy", d, applied("app", "a")...)
		}
		clock.Advance(time.Minute)
	}
	clock.Advance(48 * time.Hour)
	count := func(table, node string) int64 {
		var n int64
		if err := s.read.QueryRow(testdb.Rebind("SELECT COUNT(*) FROM "+table+" WHERE node = ?"), node).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	quietBefore := map[string]int64{}
	for _, table := range []string{"transitions", "reports", "sends"} {
		quietBefore[table] = count(table, "quiet")
	}
	if _, err := s.Prune(ctx, Retention{For: 24 * time.Hour, KeepPerNode: 10, Window: 7}); err != nil {
		t.Fatal(err)
	}
	for _, table := range []string{"transitions", "reports", "sends"} {
		if got := count(table, "busy"); got != 10 {
			t.Errorf("%s: busy keeps %d rows, want its newest 10", table, got)
		}
		if got := count(table, "quiet"); got != quietBefore[table] {
			t.Errorf("%s: quiet keeps %d rows, want all %d", table, got, quietBefore[table])
		}
	}
	// The newest are the ones kept: the last report is still the node's last report.
	v := mustGetNode(t, s, "busy")
	if v.LastReport == nil || v.LastReport.Summary != "applied 1 resource(s)" {
		t.Fatalf("last report %+v", v.LastReport)
	}
	// Young rows are never pruned.
	again, err := s.Prune(ctx, Retention{For: 1000 * time.Hour, KeepPerNode: 1, Window: 7})
	if err != nil || again["transitions"]+again["reports"]+again["sends"] != 0 {
		t.Fatalf("pruned %v of rows younger than retention (%v)", again, err)
	}
}
