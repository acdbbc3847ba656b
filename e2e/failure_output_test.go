package e2e

import (
	"html"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/internal/testdb"
)

// Why did it fail: a stuck file whose validate printed its complaint shows that line in the
// API's node answer, on the node page and in `hq node`. Once the resource is held instead, the
// hold reason shows there, not the error of the earlier attempts.
func TestStuckResourceShowsWhatItsValidatePrinted(t *testing.T) {
	ctl := startController(t, testdb.New(t), "HQ_STUCK_ATTEMPTS=2")
	c := newClient(t, ctl.url)
	h := newHost(t, c, ctl.url, "web-1", "HOSTD_INTERVAL=300ms")
	c.putModule("app", hq.Resource{Name: "conf", Kind: hq.KindFile, Path: "/etc/app.conf", Content: "x\n",
		Validate: []string{"sh", "-c", `echo checking {path}; echo "line 3: unknown directive" >&2; exit 1`}})
	c.assign("web-1", "app", false)
	waitFor(t, 30*time.Second, "app/conf stuck", func() bool {
		return resourceOf(c.node("web-1"), "app", "conf").State == hq.StateStuck
	})
	const said = "line 3: unknown directive"
	if r := resourceOf(c.node("web-1"), "app", "conf"); !strings.HasPrefix(r.LastError, "validate: exit status 1: checking ") ||
		!strings.HasSuffix(r.LastError, "\n"+said) {
		t.Fatalf("the API's last error %q does not end with what validate printed", r.LastError)
	}
	code, page := getPage(t, ctl.url+"/nodes/web-1")
	if code != http.StatusOK || !strings.Contains(html.UnescapeString(page), said) {
		t.Fatalf("the node page (%d) does not show %q", code, said)
	}
	out, err := hqCLI(t, ctl.url, "node", "web-1")
	if err != nil || !strings.Contains(out, "app/conf stuck: validate: exit status 1: checking ") ||
		!strings.Contains(out, "\n    "+said+"\n") {
		t.Fatalf("hq node web-1 (%v):\n%s", err, out)
	}

	// The file appears on the node, unmanaged, and the module is not taken: after a retry the
	// host holds the resource, and no surface shows the old error beside the hold.
	if err := os.MkdirAll(filepath.Join(h.root, "etc"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(h.root, "etc/app.conf"), []byte("found\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c.call("POST", "/nodes/web-1/resources/app/conf/retry", nil, nil)
	waitFor(t, 30*time.Second, "app/conf held", func() bool {
		return resourceOf(c.node("web-1"), "app", "conf").State == hq.StateHeld
	})
	if r := resourceOf(c.node("web-1"), "app", "conf"); r.LastError != "" || r.HoldReason == "" {
		t.Fatalf("held: last error %q, hold reason %q", r.LastError, r.HoldReason)
	}
	if _, page = getPage(t, ctl.url+"/nodes/web-1"); strings.Contains(html.UnescapeString(page), said) {
		t.Fatal("the node page still shows the error of an earlier attempt beside the hold")
	}
	out, err = hqCLI(t, ctl.url, "node", "web-1")
	if err != nil || strings.Contains(out, said) || !strings.Contains(out, "app/conf held: would overwrite") {
		t.Fatalf("hq node web-1 once held (%v):\n%s", err, out)
	}
}
