package webui

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/meshhq/hq"
)

// maxPageBytes is what a page with the largest diffs a node or an upload can make may weigh.
const maxPageBytes = 2 << 20

// randomLines is about size bytes of lines of random hex, none like another's.
func randomLines(r *rand.Rand, size int) string {
	var b strings.Builder
	for b.Len() < size-65 {
		fmt.Fprintf(&b, "%016x%016x%016x%015x\n", r.Uint64(), r.Uint64(), r.Uint64(), r.Uint64()>>4)
	}
	return b.String()
}

// driftedNode is a node whose page shows 20 drifts of files declared with declared bytes of
// random lines, hostd having found found bytes of other random lines in each.
func driftedNode(tb testing.TB, declared, found int) *bundle {
	tb.Helper()
	b := setup(tb)
	r := rand.New(rand.NewPCG(1, 2))
	b.node(tb, "web-1")
	var rs []hq.Resource
	for i := range 20 {
		rs = append(rs, hq.Resource{Name: fmt.Sprintf("f%02d", i), Kind: hq.KindFile, Path: fmt.Sprintf("/etc/f%02d", i), Content: randomLines(r, declared)})
	}
	b.module(tb, "app", rs...)
	b.assign(tb, "web-1", "app")
	for i := range 20 {
		res := result("app", rs[i].Name, hq.StateApplied)
		res.Changed, res.Drift, res.DriftDetail, res.DriftFound = true, true, "content sha256:aa (want sha256:bb)", randomLines(r, found)
		b.report(tb, "web-1", res)
	}
	return b
}

// revisedModule is a module of 50 files of 64 KiB of random lines, uploaded twice with other
// lines each time.
func revisedModule(tb testing.TB) *bundle {
	tb.Helper()
	b := setup(tb)
	r := rand.New(rand.NewPCG(3, 4))
	for range 2 {
		var rs []hq.Resource
		for i := range 50 {
			rs = append(rs, hq.Resource{Name: fmt.Sprintf("f%02d", i), Kind: hq.KindFile, Path: fmt.Sprintf("/etc/f%02d", i), Content: randomLines(r, maxDiffText)})
		}
		b.module(tb, "big", rs...)
	}
	return b
}

// The node page of a node with 20 drifts of 16 KiB found against 64 KiB declared, or against
// 16 KiB declared, stays under 2 MB: a declared file larger than what hostd sends is
// summarised, and the page shows at most maxPageDiff of diffs.
func TestDriftPageIsBounded(t *testing.T) {
	for _, c := range []struct {
		declared int
		says     string
	}{
		{64 << 10, "diff not shown: 64 KiB against 16 KiB, too large to show (texts up to 16 KiB are compared); "},
		{16 << 10, "more lines of this diff not shown"},
	} {
		b := driftedNode(t, c.declared, hq.MaxDriftFound)
		body := getOK(t, b, "/nodes/web-1")
		if len(body) > maxPageBytes {
			t.Errorf("declared %d: the node page is %d bytes", c.declared, len(body))
		}
		wantAll(t, "/nodes/web-1", body, c.says)
	}
}

// The diff of two revisions of 50 files of 64 KiB of random lines stays under 2 MB: the page
// shows diffs up to maxPageDiff and names the files it leaves out.
func TestRevisionDiffPageIsBounded(t *testing.T) {
	b := revisedModule(t)
	body := getOK(t, b, "/modules/big/diff?from=1&to=2")
	if len(body) > maxPageBytes {
		t.Errorf("the diff page is %d bytes", len(body))
	}
	wantAll(t, "/modules/big/diff", body, "r1→r2: 0 added, 0 removed, 50 changed, 0 unchanged",
		`<span class="hunk">--- r1/f00</span>`, "content: diff not shown: the page shows at most 256 KiB of diffs; ", `id="change-f49"`)
}
