package db

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/meshhq/hq"
)

// signedByUs stands for a report whose signature the controller's key verifies.
var signedByUs = IngestOptions{Signed: func(hq.Report) bool { return true }}

// rowCounts reads how many rows every table holds, and every node's generations.
func rowCounts(t *testing.T, s *Store) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	for _, table := range []string{"nodes", "modules", "module_revisions", "assignments", "resource_states", "transitions", "sends", "reports"} {
		var n int64
		if err := s.read.QueryRow("SELECT COUNT(*) FROM " + table).Scan(&n); err != nil {
			t.Fatal(err)
		}
		out[table] = n
	}
	var g, a int64
	if err := s.read.QueryRow("SELECT COALESCE(SUM(generation), 0), COALESCE(SUM(applied_generation), 0) FROM nodes").Scan(&g, &a); err != nil {
		t.Fatal(err)
	}
	out["generations"], out["applied_generations"] = g, a
	return out
}

// refused checks that ingesting rep fails with code and changes nothing.
func refused(t *testing.T, s *Store, node string, rep hq.Report, opts IngestOptions, code hq.Code) {
	t.Helper()
	before := rowCounts(t, s)
	_, err := s.Ingest(context.Background(), node, rep, opts)
	wantCode(t, err, code)
	if after := rowCounts(t, s); !mapsEqual(before, after) {
		t.Fatalf("a refused report changed the database:\nbefore %v\nafter  %v", before, after)
	}
}

func mapsEqual(a, b map[string]int64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func trustBed(t *testing.T) (*Store, hq.Declaration) {
	s, _ := setup(t)
	mustNode(t, s, "web-1")
	mustModule(t, s, "app", file("a", "1"), file("b", "1"))
	mustAssign(t, s, "web-1", "app")
	d, err := s.Compose(context.Background(), "web-1", "test")
	if err != nil {
		t.Fatal(err)
	}
	return s, d
}

// A node that never fetched a declaration cannot make its rows applied with a forged one.
func TestReportOfAForgedDeclarationIsRefused(t *testing.T) {
	t.Parallel()
	s, d := trustBed(t)
	forged := hq.Report{Generation: d.Generation, Digest: "sha256:forged", Results: applied("app", "a", "b")}
	refused(t, s, "web-1", forged, IngestOptions{}, hq.CodeInvalid)
	forged.SendID = d.SendID
	refused(t, s, "web-1", forged, IngestOptions{}, hq.CodeInvalid)
	if r := resource(t, s, "web-1", "app", "a"); r.State != hq.StatePending {
		t.Fatalf("state %s after a forged report", r.State)
	}
}

// A node's own token cannot push its generation to the top of int64 and wedge the node.
func TestReportCannotWedgeTheGeneration(t *testing.T) {
	t.Parallel()
	s, d := trustBed(t)
	wedge := hq.Report{SendID: d.SendID, Generation: math.MaxInt64 - 1, Digest: d.Digest, Results: applied("app", "a")}
	refused(t, s, "web-1", wedge, IngestOptions{}, hq.CodeInvalid)
	// Signed or not, a generation near the top is nothing a controller ever signed (the API's
	// signature binds the generation too): it moves nothing.
	wedge.Generation = math.MaxInt64 - 1
	if _, err := s.Ingest(context.Background(), "web-1", wedge, signedByUs); err != nil {
		t.Fatal(err)
	}
	if g := mustGeneration(t, s, "web-1"); g != d.Generation {
		t.Fatalf("generation %d, want %d", g, d.Generation)
	}
	mustModule(t, s, "other", file("c", "1"))
	mustAssign(t, s, "web-1", "other")
}

// Results for resources the declaration does not name, or more results than it declared, are
// refused whole.
func TestReportResultsAreBoundedByTheDeclaration(t *testing.T) {
	t.Parallel()
	s, d := trustBed(t)
	rep := hq.Report{SendID: d.SendID, Generation: d.Generation, Digest: d.Digest,
		Results: append(applied("app", "a"), applied("mailu", "x")...)}
	refused(t, s, "web-1", rep, IngestOptions{}, hq.CodeInvalid)
	rep.Results = applied("app", "a", "b", "c")
	refused(t, s, "web-1", rep, IngestOptions{}, hq.CodeInvalid)
	rep.Results = applied("app", "a", "b")
	if _, err := s.Ingest(context.Background(), "web-1", rep, IngestOptions{}); err != nil {
		t.Fatal(err)
	}
}

// A report that names no declaration has no results, and never lowers applied_generation.
func TestReportCannotLowerTheAppliedGeneration(t *testing.T) {
	t.Parallel()
	s, d := trustBed(t)
	ingest(t, s, "web-1", d, applied("app", "a", "b")...)
	nothing := hq.Report{Results: applied("app", "a")}
	refused(t, s, "web-1", nothing, IngestOptions{}, hq.CodeInvalid)
	nothing.Results = nil
	if _, err := s.Ingest(context.Background(), "web-1", nothing, IngestOptions{}); err != nil {
		t.Fatal(err)
	}
	v := mustGetNode(t, s, "web-1")
	if v.AppliedGeneration != d.Generation {
		t.Fatalf("applied_generation %d, want %d", v.AppliedGeneration, d.Generation)
	}
	refused(t, s, "web-1", hq.Report{SendID: d.SendID, Generation: 0, Digest: d.Digest}, IngestOptions{}, hq.CodeInvalid)
}

// Free text from a node is stored at most MaxText long, with a marker.
func TestReportTextIsTruncated(t *testing.T) {
	t.Parallel()
	s, d := trustBed(t)
	f := failing("app", "a")
	f.Error = strings.Repeat("e", 1<<20)
	ingest(t, s, "web-1", d, f, applied("app", "b")[0])
	r := resource(t, s, "web-1", "app", "a")
	if len(r.LastError) > hq.MaxText || !strings.HasSuffix(r.LastError, "bytes truncated]") {
		t.Fatalf("last_error of %d bytes: …%s", len(r.LastError), r.LastError[len(r.LastError)-30:])
	}
}
