package db

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/internal/testdb"
)

// Reports that wait for the writer together are committed together, and each still gets its
// own answer: the good ones are written, one refused for what it says changes nothing, and one
// the database itself refuses (a trigger here) fails alone, after the others are written again
// without it.
func TestReportsWaitingTogetherShareACommit(t *testing.T) {
	s, _ := setup(t)
	ctx := context.Background()
	const nodes = 12
	mustModule(t, s, "app", file("conf", "1"))
	decls := make([]hq.Declaration, nodes)
	for i := range nodes {
		name := fmt.Sprintf("n%02d", i)
		mustNode(t, s, name)
		mustAssign(t, s, name, "app")
		decls[i], _ = s.Compose(ctx, name, "test")
	}
	if _, err := s.write.Exec(testdb.Pick(
		`CREATE TRIGGER refuse_n11 BEFORE INSERT ON reports WHEN NEW.node = 'n11' BEGIN SELECT RAISE(ABORT, 'the disk went away'); END`,
		`CREATE FUNCTION refuse_n11() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'the disk went away'; END $$;
		CREATE TRIGGER refuse_n11 BEFORE INSERT ON reports FOR EACH ROW WHEN (NEW.node = 'n11') EXECUTE FUNCTION refuse_n11()`)); err != nil {
		t.Fatal(err)
	}
	// Hold the one write connection, so every report below waits for it at once.
	hold, err := s.write.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	errs := make([]error, nodes)
	var wg sync.WaitGroup
	for i := range nodes {
		results := applied("app", "conf")
		if i == 10 {
			results = applied("app", "conf", "undeclared")
		}
		wg.Go(func() {
			_, errs[i] = s.Ingest(ctx, decls[i].Node, hq.Report{SendID: decls[i].SendID, Generation: decls[i].Generation,
				Digest: decls[i].Digest, Results: results}, IngestOptions{})
		})
	}
	time.Sleep(200 * time.Millisecond)
	hold.Close()
	wg.Wait()
	for i, err := range errs {
		switch {
		case i == 10:
			wantCode(t, err, hq.CodeInvalid)
		case i == 11:
			if err == nil {
				t.Error("n11: the report the database refused was answered as written")
			}
		case err != nil:
			t.Errorf("n%02d: %v", i, err)
		}
	}
	for i := range nodes {
		name := fmt.Sprintf("n%02d", i)
		v, err := s.GetNode(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		applied := v.Resources[0].State == hq.StateApplied
		if applied != (i < 10) {
			t.Errorf("%s: conf is %s", name, v.Resources[0].State)
		}
	}
	if got := s.batched.Load(); got < 2 {
		t.Fatalf("the largest commit held %d report(s); the waiting reports were not committed together", got)
	}
}
