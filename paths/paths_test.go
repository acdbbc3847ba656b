package paths

import (
	"slices"
	"testing"
)

// Overlaps over a fleet's worth of claims: a pair of old claims is not reported, a new claim
// under an old non-directory is, and so is an old claim under a new non-directory.
func TestOverlapsReportsOnlyNewPairs(t *testing.T) {
	claims := []Claim{
		{Path: "/old/file", Kind: "file", ID: 0},
		{Path: "/old/file/child", Kind: "file", ID: 1},
		{Path: "/etc", Kind: "directory", Dir: true, ID: 2},
		{Path: "/etc/app", Kind: "absent", New: true, ID: 3},
		{Path: "/etc/app/conf", Kind: "file", ID: 4},
		{Path: "/var/log", Kind: "file", ID: 5},
		{Path: "/var/log/new", Kind: "file", New: true, ID: 6},
		{Path: "/var/lib", Kind: "directory", Dir: true, New: true, ID: 7},
		{Path: "/var/lib/x", Kind: "file", ID: 8},
	}
	got := Overlaps(claims)
	want := [][2]int{{3, 4}, {5, 6}}
	if len(got) != len(want) {
		t.Fatalf("overlaps %+v, want %v", got, want)
	}
	for i, w := range want {
		if got[i].Outer.ID != w[0] || got[i].Inner.ID != w[1] {
			t.Errorf("overlap %d: %d over %d, want %v", i, got[i].Outer.ID, got[i].Inner.ID, w)
		}
	}
}

// FuzzOverlaps checks the one-walk overlap rule against the plain reading of it, pair by
// pair, on small sets of paths drawn from a few that nest, share prefixes and repeat: every
// overlap it reports is one, at most one per claim; every new claim of a repeated path is in a
// reported repeat, and every claim of a path declared once that lies under a path that may not
// hold it is reported.
func FuzzOverlaps(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 4, 5})
	f.Add([]byte{0x10, 0x21, 0x32, 0x43, 0x54, 0x65, 0x76, 0x87})
	f.Add([]byte{0x04, 0x14, 0x24, 0x11, 0x01})
	f.Add([]byte{0xff, 0x7f, 0x3f, 0x1f, 0x0f})
	paths := []string{"/a", "/a/b", "/a/b/c", "/a-b", "/a/c", "/ab", "/a/b-c", "/b", "/a/b/c/d", "/a.b/c", "/b/a", "/a/bc"}
	kinds := []struct {
		name string
		dir  bool
	}{{"file", false}, {"directory", true}, {"symlink", false}, {"absent", false}}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 24 {
			data = data[:24]
		}
		claims := make([]Claim, len(data))
		for i, c := range data {
			k := kinds[int(c>>4)%len(kinds)]
			claims[i] = Claim{Path: paths[int(c&0x0f)%len(paths)], Kind: k.name, Dir: k.dir, New: c&0x80 != 0, ID: i}
		}
		orig := slices.Clone(claims)
		got := Overlaps(claims)
		inner, same := map[int]bool{}, map[int]bool{}
		for _, o := range got {
			if o.Same() {
				same[o.Outer.ID], same[o.Inner.ID] = true, true
			}
			if inner[o.Inner.ID] {
				t.Fatalf("claim %d reported twice: %+v", o.Inner.ID, got)
			}
			inner[o.Inner.ID] = true
			if !o.Outer.New && !o.Inner.New {
				t.Fatalf("reported two old claims: %+v", o)
			}
			if !o.Same() && !(under(o.Inner.Path, o.Outer.Path) && !o.Outer.Dir) {
				t.Fatalf("reported what is no overlap: %+v", o)
			}
		}
		count := map[string]int{}
		for _, c := range orig {
			count[c.Path]++
		}
		for _, c := range orig {
			for _, d := range orig {
				if c.ID == d.ID || !c.New && !d.New {
					continue
				}
				if c.Path == d.Path && c.New && !same[c.ID] {
					t.Fatalf("%+v declares the path of %+v; not reported in %+v", c, d, got)
				}
				if count[c.Path] == 1 && under(c.Path, d.Path) && !d.Dir && !inner[c.ID] {
					t.Fatalf("%+v lies under %+v; not reported in %+v", c, d, got)
				}
			}
		}
	})
}
