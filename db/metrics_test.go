package db

import (
	"context"
	"testing"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/internal/testdb"
)

func TestFiguresAgreeWithStatus(t *testing.T) {
	t.Parallel()
	s, _ := setupWith(t, Options{StuckAttempts: 1})
	ctx := context.Background()
	for _, n := range []string{"n1", "n2", "n3"} {
		mustNode(t, s, n)
	}
	mustModule(t, s, "app", file("conf", "x"), file("ok", "y"))
	for _, n := range []string{"n1", "n2"} {
		mustAssign(t, s, n, "app")
		d := mustCompose(t, s, n, "test")
		ingest(t, s, n, d, failing("app", "conf"), applied("app", "ok")[0])
		ingest(t, s, n, d, failing("app", "conf"), applied("app", "ok")[0])
	}
	f, err := s.Figures(ctx)
	if err != nil {
		t.Fatal(err)
	}
	st, err := s.MeshStatus(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, status := range hq.Statuses {
		if f.Nodes[status] != st.Nodes[string(status)] {
			t.Errorf("nodes %s: figures %d, status %d", status, f.Nodes[status], st.Nodes[string(status)])
		}
	}
	if f.Nodes[hq.StatusStuck] != 2 || f.Nodes[hq.StatusNew] != 1 {
		t.Errorf("nodes by status %v, want 2 stuck and 1 new", f.Nodes)
	}
	if f.Resources[hq.StateStuck] != 2 || f.Resources[hq.StateApplied] != 2 || f.Resources[hq.StateFailed] != 0 {
		t.Errorf("resources by state %v, want 2 stuck and 2 applied", f.Resources)
	}
	if f.Stuck[hq.ScopeMeshWide] != 1 || f.Stuck[hq.ScopeNodeLocal] != 0 {
		t.Errorf("stuck by scope %v, want app/conf once, mesh-wide", f.Stuck)
	}
	if f.Sends["applied"] != 2 || f.Sends["refused"] != 0 {
		t.Errorf("sends by outcome %v, want 2 applied", f.Sends)
	}
	// PostgreSQL's write-ahead log is the server's, not the database's: it counts none.
	if f.DatabaseBytes == 0 || (f.WALBytes == 0) != testdb.Postgres() {
		t.Errorf("database %d bytes, WAL %d bytes: want both above 0 (on PostgreSQL, no WAL)", f.DatabaseBytes, f.WALBytes)
	}
}
