package db

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/meshhq/hq"
)

// Every put-back a report names is a drifts row with what differed, also when the report
// says what the one before said; three within the hour give the node a line, and the mesh
// lists the resource.
func TestDriftIsKeptCountedAndShown(t *testing.T) {
	t.Parallel()
	s, clock := setup(t)
	ctx := context.Background()
	mustNode(t, s, "web-1")
	mustModule(t, s, "app", file("conf", "1"), file("other", "1"))
	mustAssign(t, s, "web-1", "app")
	d := mustCompose(t, s, "web-1", "test")
	ingest(t, s, "web-1", d, applied("app", "conf", "other")...)
	drifted := applied("app", "conf", "other")
	drifted[0].Changed, drifted[0].Drift, drifted[0].DriftDetail = true, true, "content sha256:ab12 (want sha256:cd34)"
	var resp hq.ReportResponse
	for i := range 3 {
		clock.Advance(time.Minute)
		resp = ingest(t, s, "web-1", d, drifted...)
		if i == 0 && resp.Summary != "applied 2 resource(s) (1 drift put back: app/conf)" {
			t.Fatalf("summary %q", resp.Summary)
		}
	}
	drifts, err := s.Drifts(ctx, "web-1", 10)
	if err != nil || len(drifts) != 3 || drifts[0].Detail != "content sha256:ab12 (want sha256:cd34)" || drifts[0].ReportID == nil {
		t.Fatalf("drifts %+v, %v", drifts, err)
	}
	v := mustGetNode(t, s, "web-1")
	want := "drift: app/conf put back 3 time(s) in the last hour"
	if v.Status != hq.StatusConverged || !strings.Contains(strings.Join(v.Lines, "\n"), want) || len(v.Drifting) != 1 {
		t.Fatalf("node %s, lines %q, drifting %+v", v.Status, v.Lines, v.Drifting)
	}
	st := mustMeshStatus(t, s)
	if len(st.Drifting) != 1 || st.Drifting[0].Drifts != 3 || st.Drifting[0].Nodes != 1 ||
		!strings.Contains(strings.Join(st.Lines, "\n"), "drift: app/conf put back 3 time(s) on 1 node(s) in the last 24h") {
		t.Fatalf("mesh drifting %+v, lines %q", st.Drifting, st.Lines)
	}
	// An hour later the line is gone; the rows stay until retention.
	clock.Advance(2 * time.Hour)
	v = mustGetNode(t, s, "web-1")
	if strings.Contains(strings.Join(v.Lines, "\n"), "drift:") {
		t.Fatalf("a drift line two hours on: %q", v.Lines)
	}
}

// What hostd found in a drifted small text file is kept with the drift, cleaned and bounded,
// beside the content the file is declared to have, for a page to show the two as a diff.
func TestDriftKeepsWhatWasFound(t *testing.T) {
	t.Parallel()
	s, _ := setup(t)
	ctx := context.Background()
	mustNode(t, s, "web-1")
	mustModule(t, s, "app", file("conf", "port 80\n"), file("other", "1"))
	mustAssign(t, s, "web-1", "app")
	d := mustCompose(t, s, "web-1", "test")
	res := applied("app", "conf", "other")
	res[0].Changed, res[0].Drift, res[0].DriftDetail, res[0].DriftFound = true, true, "content sha256:ab12 (want sha256:cd34)", "port 8080\x00\n"
	res[1].Changed, res[1].Drift, res[1].DriftDetail = true, true, "mode 0600 (want 0644)"
	ingest(t, s, "web-1", d, res...)
	drifts, err := s.Drifts(ctx, "web-1", 10)
	if err != nil || len(drifts) != 2 {
		t.Fatalf("drifts %+v, %v", drifts, err)
	}
	byName := map[string]hq.DriftView{}
	for _, dv := range drifts {
		byName[dv.Resource] = dv
	}
	if f := byName["conf"].Found; f == nil || *f != "port 8080\uFFFD\n" {
		t.Fatalf("found %v, want the content with its NUL replaced", f)
	}
	if byName["other"].Found != nil {
		t.Fatalf("a drift without content found has %q", *byName["other"].Found)
	}
	declared, err := s.DeclaredTexts(ctx, "web-1", []string{"app/conf", "app/gone"})
	if err != nil || len(declared) != 1 || declared["app/conf"] != "port 80\n" {
		t.Fatalf("declared %q, %v; want app/conf's content alone", declared, err)
	}
}

// The declared text of a drifted file is read and filled in alone, not by composing the node's
// declaration: a node with a large one costs the page that one file.
func TestDeclaredTextsReadOnlyTheFiles(t *testing.T) {
	t.Parallel()
	s, _ := setup(t)
	ctx := context.Background()
	mustNode(t, s, "web-1")
	if _, err := s.SetVars(ctx, "web-1", map[string]string{"port": "80"}, nil); err != nil {
		t.Fatal(err)
	}
	mustModule(t, s, "app", file("conf", "port {{.Vars.port}}\n"), file("big", strings.Repeat("x", 100<<10)))
	mustAssign(t, s, "web-1", "app")
	// Past a lowered bound the declaration is no longer composed; the one file still is read.
	s.opt.MaxDeclaration = 64 << 10
	if _, err := s.Declaration(ctx, "web-1"); err == nil {
		t.Fatal("composed past the bound")
	}
	declared, err := s.DeclaredTexts(ctx, "web-1", []string{"app/conf", "app/gone", "other/conf"})
	if err != nil || len(declared) != 1 || declared["app/conf"] != "port 80\n" {
		t.Fatalf("declared %q, %v; want app/conf's content filled in, alone", declared, err)
	}
}
