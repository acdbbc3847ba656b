package hq_test

import (
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// docImport is one line of the list of imports in docs/architecture.md.
var docImport = regexp.MustCompile("^- `([^`]+)`: (.*)$")

// docs/architecture.md lists, for every package of the module, the module's packages it imports;
// go list is the truth it is held to, both ways.
func TestArchitectureDocumentMatchesTheImports(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("docs/architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	_, list, ok := strings.Cut(string(doc), "<!-- imports -->\n")
	list, _, ok2 := strings.Cut(list, "<!-- /imports -->")
	if !ok || !ok2 {
		t.Fatal("docs/architecture.md has no list of imports between <!-- imports --> and <!-- /imports -->")
	}
	written := map[string]string{}
	for line := range strings.Lines(list) {
		m := docImport.FindStringSubmatch(strings.TrimSpace(line))
		if m == nil {
			t.Fatalf("docs/architecture.md: not a line of the list: %q", line)
		}
		written[m[1]] = m[2]
	}
	actual := moduleImports(t)
	for pkg, imports := range actual {
		want := "nothing"
		if len(imports) > 0 {
			want = "`" + strings.Join(imports, "`, `") + "`"
		}
		got, listed := written[pkg]
		switch {
		case !listed:
			t.Errorf("docs/architecture.md does not list package %s (it imports %s)", pkg, want)
		case got != want:
			t.Errorf("docs/architecture.md says %s imports %s; it imports %s", pkg, got, want)
		}
	}
	for pkg := range written {
		if _, ok := actual[pkg]; !ok {
			t.Errorf("docs/architecture.md lists %s, which is no package of the module", pkg)
		}
	}
}

// moduleImports is, for each package of the module, the module's packages it imports directly,
// as go list says, named by their path inside the module ("hq" for the root).
func moduleImports(t *testing.T) map[string][]string {
	t.Helper()
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	const module = "github.com/meshhq/hq"
	short := func(p string) (string, bool) {
		if p == module {
			return "hq", true
		}
		rest, ok := strings.CutPrefix(p, module+"/")
		return rest, ok
	}
	imports := map[string][]string{}
	for line := range strings.Lines(string(out)) {
		fields := strings.Fields(line)
		pkg, _ := short(fields[0])
		imports[pkg] = []string{}
		for _, imp := range fields[1:] {
			if name, ok := short(imp); ok {
				imports[pkg] = append(imports[pkg], name)
			}
		}
		// go list sorts the imports by path, which puts the root ("hq") among them; the
		// document names the root first.
		slices.SortStableFunc(imports[pkg], func(a, b string) int {
			return boolCmp(a != "hq", b != "hq")
		})
	}
	return imports
}

func boolCmp(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}
