package db

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/meshhq/hq"
)

func heldResult(name string, f *hq.FoundFile) hq.Result {
	return hq.Result{Module: "app", Resource: name, Outcome: hq.StateHeld, HoldReason: "would overwrite /etc/" + name + ", found on this node; not applied until app is taken", HeldFound: f}
}

func holdsOf(t *testing.T, s *Store, node string) map[string]*hq.FoundFile {
	t.Helper()
	v, err := s.GetNode(context.Background(), node)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*hq.FoundFile{}
	for _, h := range v.Holds {
		out[h.Resource] = h.Found
	}
	return out
}

// heldFoundColumns counts the rows of resource_states that keep what a held file holds.
func heldFoundColumns(t *testing.T, s *Store) int {
	t.Helper()
	var n int
	if err := s.read.QueryRowContext(context.Background(),
		`SELECT COUNT(*) FROM resource_states WHERE held_found IS NOT NULL OR held_found_omitted <> ''`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// What hostd found in a held file is stored with the hold and shown with it; a change of it is
// news (not a repeat of the report before); it is forgotten once the resource is not held.
func TestHeldFoundIsStoredAndClearedOnTake(t *testing.T) {
	t.Parallel()
	s, _ := setup(t)
	ctx := context.Background()
	mustNode(t, s, "web-1")
	mustModule(t, s, "app", file("conf", "ours\n"), file("blob", "ours\n"), file("old", "ours\n"))
	mustAssign(t, s, "web-1", "app")
	d := mustCompose(t, s, "web-1", "test")
	first := ingest(t, s, "web-1", d, heldResult("conf", &hq.FoundFile{Text: "theirs\n"}),
		heldResult("blob", &hq.FoundFile{Omitted: hq.FoundBinary}), heldResult("old", nil))
	want := map[string]*hq.FoundFile{"conf": {Text: "theirs\n"}, "blob": {Omitted: hq.FoundBinary}, "old": nil}
	if got := holdsOf(t, s, "web-1"); !reflect.DeepEqual(got, want) {
		t.Fatalf("holds %+v, want %+v", got, want)
	}

	// The same report again is a repeat; one whose found content changed is not, and is stored.
	if again := ingest(t, s, "web-1", d, heldResult("conf", &hq.FoundFile{Text: "theirs\n"}),
		heldResult("blob", &hq.FoundFile{Omitted: hq.FoundBinary}), heldResult("old", nil)); again.ReportID != first.ReportID {
		t.Fatalf("the same report again is report %d, want a repeat of %d", again.ReportID, first.ReportID)
	}
	changed := ingest(t, s, "web-1", d, heldResult("conf", &hq.FoundFile{Text: "theirs, edited\n"}),
		heldResult("blob", &hq.FoundFile{Omitted: hq.FoundBinary}), heldResult("old", nil))
	if changed.ReportID == first.ReportID {
		t.Fatal("a report whose held file changed was counted a repeat")
	}
	if got := holdsOf(t, s, "web-1")["conf"]; got == nil || got.Text != "theirs, edited\n" {
		t.Fatalf("conf after its found content changed: %+v", got)
	}

	// Take: what the host applied is no longer held, and nothing of what was found is kept.
	if _, err := s.Take(ctx, "web-1", "app", nil); err != nil {
		t.Fatal(err)
	}
	taken := mustCompose(t, s, "web-1", "test")
	ingest(t, s, "web-1", taken, applied("app", "conf", "blob", "old")...)
	if got := holdsOf(t, s, "web-1"); len(got) != 0 {
		t.Fatalf("holds after take: %+v", got)
	}
	if n := heldFoundColumns(t, s); n != 0 {
		t.Fatalf("%d rows keep what a held file held after take", n)
	}
}

// A held file declared anew starts over pending, and forgets what was found; the schema
// refuses a row that is not held and keeps it.
func TestHeldFoundIsClearedWhenRedeclared(t *testing.T) {
	t.Parallel()
	s, _ := setup(t)
	ctx := context.Background()
	mustNode(t, s, "web-1")
	mustModule(t, s, "app", file("conf", "ours\n"))
	mustAssign(t, s, "web-1", "app")
	d := mustCompose(t, s, "web-1", "test")
	ingest(t, s, "web-1", d, heldResult("conf", &hq.FoundFile{Text: "theirs\n"}))
	if n := heldFoundColumns(t, s); n != 1 {
		t.Fatalf("%d rows keep what was found, want 1", n)
	}
	mustModule(t, s, "app", file("conf", "ours, v2\n"))
	if r := resource(t, s, "web-1", "app", "conf"); r.State != hq.StatePending {
		t.Fatalf("conf after a new revision: %s", r.State)
	}
	if n := heldFoundColumns(t, s); n != 0 {
		t.Fatalf("%d rows keep what was found after a new revision", n)
	}
	if _, err := s.write.ExecContext(ctx, `UPDATE resource_states SET held_found = 'x' WHERE resource = 'conf'`); err == nil {
		t.Fatal("a pending row was let keep what a held file held")
	}
	if _, err := s.write.ExecContext(ctx, `UPDATE resource_states SET state = 'held', held_found_omitted = 'secret' WHERE resource = 'conf'`); err == nil {
		t.Fatal("an unknown reason for leaving the content out was stored")
	}
}

// A node's answer carries at most hq.MaxHeldFound of held files' content, in the holds' order;
// the holds past it say so.
func TestHeldFoundInTheAnswerIsBounded(t *testing.T) {
	t.Parallel()
	s, _ := setup(t)
	mustNode(t, s, "web-1")
	n := hq.MaxHeldFound/hq.MaxDriftFound + 2
	var rs []hq.Resource
	var results []hq.Result
	text := strings.Repeat("z", hq.MaxDriftFound)
	for i := range n {
		name := fmt.Sprintf("f%02d", i)
		rs = append(rs, file(name, "ours\n"))
		results = append(results, heldResult(name, &hq.FoundFile{Text: text}))
	}
	mustModule(t, s, "app", rs...)
	mustAssign(t, s, "web-1", "app")
	ingest(t, s, "web-1", mustCompose(t, s, "web-1", "test"), results...)
	total, over := 0, 0
	for name, f := range holdsOf(t, s, "web-1") {
		switch {
		case f == nil:
			t.Fatalf("%s: nothing said of what was found", name)
		case f.Omitted == hq.FoundTooMany:
			over++
		default:
			total += len(f.Text)
		}
	}
	if total != hq.MaxHeldFound || over != 2 {
		t.Fatalf("%d bytes of content in the answer, %d holds past the bound; want %d and 2", total, over, hq.MaxHeldFound)
	}
}
