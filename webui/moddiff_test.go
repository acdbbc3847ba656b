package webui

import (
	"fmt"
	"strings"
	"testing"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/db"
)

func TestDiffRevisions(t *testing.T) {
	var a, b db.Revision
	a.Revision, b.Revision = 3, 4
	for i := range 60 {
		name := fmt.Sprintf("f%02d", i)
		a.Resources = append(a.Resources, hq.Resource{Name: name, Kind: hq.KindFile, Path: "/etc/" + name, Content: "old\n"})
		b.Resources = append(b.Resources, hq.Resource{Name: name, Kind: hq.KindFile, Path: "/etc/" + name, Content: "new\n"})
	}
	a.Resources = append(a.Resources,
		hq.Resource{Name: "bin", Kind: hq.KindFile, Path: "/etc/bin", ContentBase64: "AAEC"},
		hq.Resource{Name: "dir", Kind: hq.KindDirectory, Path: "/srv/app"},
		hq.Resource{Name: "same", Kind: hq.KindSymlink, Path: "/etc/same", Target: "/etc/f00"})
	b.Resources = append(b.Resources,
		hq.Resource{Name: "bin", Kind: hq.KindFile, Path: "/etc/bin", ContentBase64: "AAED"},
		hq.Resource{Name: "same", Kind: hq.KindSymlink, Path: "/etc/same", Target: "/etc/f00"},
		hq.Resource{Name: "svc", Kind: hq.KindService, Command: []string{"/bin/app", "--port", "80"}})
	changes, summary := diffRevisions(a, b)
	if want := fmt.Sprintf("r3→r4: 1 added, 1 removed, %d changed, 1 unchanged", 61); summary != want {
		t.Fatalf("summary %q, want %q", summary, want)
	}
	byName := map[string]resourceChange{}
	for _, c := range changes {
		byName[c.Name] = c
	}
	if c := byName["f00"]; c.Change.Word != "changed" || len(c.Fields) != 0 || c.Content == nil ||
		c.Content.Text() != "--- r3/f00\n+++ r4/f00\n@@ -1 +1 @@\n-old\n+new\n" {
		t.Fatalf("f00: %+v", c)
	}
	if c := byName["f59"]; c.Content == nil || len(c.Content.Diff.Hunks) != 1 {
		t.Fatalf("the 60th file: %+v", c.Content)
	}
	if c := byName["bin"]; c.Content == nil || !strings.HasPrefix(c.Content.Note, "binary content") || len(c.Fields) != 0 {
		t.Fatalf("bin: %+v", c)
	}
	if c := byName["dir"]; c.Change.Word != "removed" || c.Content != nil || len(c.Fields) != 1 || c.Fields[0] != (fieldChange{"path", "/srv/app", ""}) {
		t.Fatalf("dir: %+v", c)
	}
	if c := byName["svc"]; c.Change.Word != "added" || len(c.Fields) != 1 || c.Fields[0] != (fieldChange{"command", "", `["/bin/app","--port","80"]`}) {
		t.Fatalf("svc: %+v", c)
	}
	if _, ok := byName["same"]; ok {
		t.Fatal("an unchanged resource is listed")
	}
	// Removed resources come after the newer revision's, in the older's order.
	if last := changes[len(changes)-1]; last.Name != "dir" {
		t.Fatalf("last change %s", last.Name)
	}
}
