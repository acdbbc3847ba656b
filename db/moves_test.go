package db

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/internal/testdb"
	"github.com/meshhq/hq/internal/wait"
)

// A new revision on more nodes than one chunk holds: the upload moves the first chunk in its
// own transaction, the mover the rest, every node once, each with its generation and rows.
func TestNewRevisionReachesAFleetInChunks(t *testing.T) {
	t.Parallel()
	s, _ := setup(t)
	ctx := context.Background()
	const nodes, resources = 200, 50
	rs := func(content string) []hq.Resource {
		out := make([]hq.Resource, resources)
		for i := range out {
			out[i] = file(fmt.Sprintf("f%02d", i), content)
		}
		return out
	}
	mustModule(t, s, "app", rs("1")...)
	for i := range nodes {
		n := fmt.Sprintf("n%03d", i)
		mustNode(t, s, n)
		mustAssign(t, s, n, "app")
	}
	res, err := s.PutModule(ctx, "app", rs("2"))
	if err != nil {
		t.Fatal(err)
	}
	perChunk := moveChunkRows / resources
	if !res.More || len(res.Generations) != perChunk {
		t.Fatalf("the upload moved %d node(s) (more: %v), want the first chunk of %d", len(res.Generations), res.More, perChunk)
	}
	wait.For(t, 20*time.Second, "the mover to move every pin", func() bool {
		behind, err := s.reader().ModuleListBehind(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return len(behind) == 0
	})
	page, err := s.ListNodes(ctx, NodeFilter{})
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range page.Nodes {
		if v.Generation != 2 || v.Assignments[0].Revision != 2 || v.Counts[hq.StatePending] != resources {
			t.Fatalf("%s: generation %d, revision %d, %d pending", v.Name, v.Generation, v.Assignments[0].Revision, v.Counts[hq.StatePending])
		}
	}
	d := mustCompose(t, s, "n199", "test")
	if d.Modules[0].Revision != 2 || d.Modules[0].Resources[0].Content != "2" {
		t.Fatalf("n199 composed %+v", d.Modules[0])
	}
}

// An upload whose transaction does not commit leaves nothing behind, not even in the cache of
// decoded revisions: the next upload takes the same revision number, and its nodes get its
// resources, not the rolled-back ones.
func TestARolledBackUploadLeavesNoCachedRevision(t *testing.T) {
	t.Parallel()
	s, _ := setup(t)
	ctx := context.Background()
	mustNode(t, s, "web-1")
	mustModule(t, s, "app", file("a", "1"))
	mustAssign(t, s, "web-1", "app")
	if _, err := s.write.Exec(testdb.Pick(`CREATE TRIGGER fail_pin BEFORE UPDATE OF revision ON assignments WHEN NEW.revision = 2
		BEGIN SELECT RAISE(ABORT, 'the disk went away'); END`,
		`CREATE FUNCTION fail_pin() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'the disk went away'; END $$;
		CREATE TRIGGER fail_pin BEFORE UPDATE OF revision ON assignments FOR EACH ROW WHEN (NEW.revision = 2) EXECUTE FUNCTION fail_pin()`)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutModule(ctx, "app", []hq.Resource{file("a", "REJECTED"), file("bad", "x")}); err == nil {
		t.Fatal("the upload succeeded through the trigger")
	}
	if _, err := s.write.Exec(testdb.Pick(`DROP TRIGGER fail_pin`, `DROP TRIGGER fail_pin ON assignments`)); err != nil {
		t.Fatal(err)
	}
	if res := mustModule(t, s, "app", file("a", "2")); res.Revision != 2 {
		t.Fatalf("revision %d, want the rolled-back one's number, 2", res.Revision)
	}
	d := mustCompose(t, s, "web-1", "test")
	if rs := d.Modules[0].Resources; len(rs) != 1 || rs[0].Content != "2" {
		t.Fatalf("web-1 is declared %+v", rs)
	}
}
