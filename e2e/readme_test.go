package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// demoExportRE is the line the demo prints for a shell to follow README's examples.
var demoExportRE = regexp.MustCompile(`(?m)^\s*export (HQ_URL=\S+ HQ_CA=\S+ CURL_CA_BUNDLE=\S+ HQ_ADMIN_TOKEN=\S+)$`)

// README's examples of the API and of the CLI run in order, as printed, against hq demo in a
// shell that ran the export line the demo prints; not one of them may fail. curl is made to
// fail on an HTTP error, which the examples' -s alone would not.
func TestReadmeExamplesRunAgainstTheDemo(t *testing.T) {
	p := start(t, "hq demo", []string{"HQ_ADDR=127.0.0.1:0", "TMPDIR=" + t.TempDir()}, "hq", "demo")
	var exports string
	waitFor(t, 60*time.Second, "the demo's export line", func() bool {
		if m := demoExportRE.FindStringSubmatch(p.out.String()); m != nil {
			exports = m[1]
		}
		return exports != ""
	})
	// As a newcomer reads the demo's text first: by then app-1's resource is stuck, which the
	// examples retry.
	env := append(os.Environ(), strings.Fields(exports)...)
	waitFor(t, 90*time.Second, "app-1 to be stuck, as the demo says it will be", func() bool {
		cmd := exec.Command(filepath.Join(bin, "hq"), "nodes", "--status", "stuck")
		cmd.Env = env
		out, _ := cmd.Output()
		return strings.Contains(string(out), "app-1")
	})
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	script := readmeExamples(t, string(readme), "## The API by example", "## The CLI, next to curl")
	script += readmeExamples(t, string(readme), "## The CLI, next to curl", "On the controller's machine")
	work := t.TempDir()
	run := exec.Command("bash", "-c", `set -eo pipefail
curl() { command curl --fail-with-body -sS "$@"; echo; }
export `+exports+`
cd `+work+`
set -x
`+script)
	run.Env = append(env, "PATH="+bin+string(filepath.ListSeparator)+os.Getenv("PATH"))
	out, err := run.CombinedOutput()
	if err != nil {
		t.Fatalf("README's examples fail against the demo (%v); the last of what they printed:\n%s", err, tail(string(out), 60))
	}
	for _, want := range []string{`"name":"web-2"`, `"module":"shop"`, "web-1", "banner"} {
		if !strings.Contains(string(out), want) {
			t.Fatalf("README's examples never printed %q:\n%s", want, out)
		}
	}
}

// readmeExamples is the text of the indented code blocks of the README's section from one
// heading to the next mark, dedented: the examples as a shell would take them.
func readmeExamples(t *testing.T, readme, from, to string) string {
	t.Helper()
	a := strings.Index(readme, from)
	b := strings.Index(readme[a+1:], to)
	if a < 0 || b < 0 {
		t.Fatalf("README has no section %q ending at %q", from, to)
	}
	var script strings.Builder
	for line := range strings.Lines(readme[a : a+1+b]) {
		if code, ok := strings.CutPrefix(line, "    "); ok {
			script.WriteString(code)
		} else if strings.TrimSpace(line) == "" {
			script.WriteString("\n")
		}
	}
	return script.String()
}

// tail is the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(s, "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
