package e2e

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/internal/testdb"
)

func routeProxy() []hq.Resource {
	files := []hq.Resource{
		{Name: "ca", Kind: hq.KindFile, Path: "/var/lib/route-proxy/ca.pem", Content: "declared ca\n"},
		{Name: "cert", Kind: hq.KindFile, Path: "/var/lib/route-proxy/cert.pem", Content: "declared cert\n"},
		{Name: "key", Kind: hq.KindFile, Path: "/var/lib/route-proxy/key.pem", Content: "declared key\n", Mode: "0600"},
	}
	return append(files, hq.Resource{Name: "proxy", Kind: hq.KindService, RestartOn: []string{"ca", "cert", "key"},
		Command: []string{"/bin/sh", "-c", "echo up > {root}/var/lib/route-proxy.up; exec sleep 600"}})
}

// Seed 125: state found on the machine for an untaken module is held, not overwritten, and
// every surface says so until the module is taken.
func TestHoldsWaitOnTake(t *testing.T) {
	ctl := startPair(t, testdb.New(t))
	c := ctl.client(t)
	edge, fresh := newHost(t, c, ctl.next(), "edge-1"), newHost(t, c, ctl.next(), "edge-2")
	found := map[string]string{"ca.pem": "left by an earlier attempt: ca\n", "cert.pem": "left: cert\n", "key.pem": "left: key\n"}
	dir := filepath.Join(edge.root, "var/lib/route-proxy")
	os.MkdirAll(dir, 0o755)
	for name, content := range found {
		os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644)
	}
	c.putModule("route-proxy", routeProxy()...)
	c.assign("edge-1", "route-proxy", false)
	c.assign("edge-2", "route-proxy", false)

	const line = "applied 0 resource(s), 4 held for untaken modules (route-proxy: 4)"
	waitFor(t, 20*time.Second, "edge-1 waiting on take", func() bool { return c.node("edge-1").Status == hq.StatusWaitingOnTake })
	v := c.node("edge-1")
	if v.LastReport.Summary != line {
		t.Fatalf("report line in the API: %q, want %q", v.LastReport.Summary, line)
	}
	waitFor(t, 5*time.Second, "the report line in hostd's log", func() bool { return strings.Contains(edge.out.String(), line) })
	if !slices.Contains(v.Lines, "waiting on take: route-proxy (4 held)") {
		t.Fatalf("lines %q", v.Lines)
	}
	reasons := map[string]string{}
	for _, h := range v.Holds {
		reasons[h.Resource] = h.Reason
	}
	want := map[string]string{
		"ca":    "would overwrite /var/lib/route-proxy/ca.pem, found on this node; not applied until route-proxy is taken",
		"cert":  "would overwrite /var/lib/route-proxy/cert.pem, found on this node; not applied until route-proxy is taken",
		"key":   "would overwrite /var/lib/route-proxy/key.pem, found on this node; not applied until route-proxy is taken",
		"proxy": "depends on held route-proxy/ca",
	}
	for r, reason := range want {
		if reasons[r] != reason {
			t.Fatalf("hold of %s: %q, want %q (all: %v)", r, reasons[r], reason, reasons)
		}
	}
	// Each held file comes with what hostd found in it, which Take would overwrite; the service,
	// held for what it depends on, with nothing.
	for _, h := range v.Holds {
		wantFound := found[h.Resource+".pem"]
		switch {
		case h.Resource == "proxy" && h.Found != nil:
			t.Errorf("the held service says what was found: %+v", h.Found)
		case h.Resource != "proxy" && (h.Found == nil || h.Found.Text != wantFound):
			t.Errorf("hold of %s found %+v, want %q", h.Resource, h.Found, wantFound)
		}
	}
	for name, content := range found {
		if got := readFile(filepath.Join(dir, name)); got != content {
			t.Fatalf("%s was touched while held: %q", name, got)
		}
	}
	if _, err := os.Stat(filepath.Join(edge.root, "var/lib/route-proxy.up")); !os.IsNotExist(err) {
		t.Fatal("the service started although it depends on held resources")
	}
	st := c.status()
	if len(st.WaitingOnTake) != 1 || st.WaitingOnTake[0] != (hq.WaitingOnTake{Node: "edge-1", Module: "route-proxy", Held: 4}) {
		t.Fatalf("/status waiting_on_take %+v", st.WaitingOnTake)
	}

	// A fresh node applies the same module untaken without holds.
	waitFor(t, 20*time.Second, "edge-2 converged", func() bool { return c.node("edge-2").Status == hq.StatusConverged })
	if got := readFile(filepath.Join(fresh.root, "var/lib/route-proxy/ca.pem")); got != "declared ca\n" {
		t.Fatalf("edge-2 ca.pem %q", got)
	}

	// Take: what was found is replaced by what is declared, the service runs.
	c.take("edge-1", "route-proxy")
	waitFor(t, 20*time.Second, "edge-1 converged after take", func() bool { return c.node("edge-1").Status == hq.StatusConverged })
	if h := c.node("edge-1").Holds; len(h) != 0 {
		t.Fatalf("holds after take: %+v", h)
	}
	if got := readFile(filepath.Join(dir, "ca.pem")); got != "declared ca\n" {
		t.Fatalf("ca.pem after take: %q", got)
	}
	waitFor(t, 10*time.Second, "the proxy service running", func() bool {
		return readFile(filepath.Join(edge.root, "var/lib/route-proxy.up")) == "up\n"
	})
	for _, r := range []string{"ca", "proxy"} {
		if got := story(c.transitions("edge-1"), "route-proxy", r); !slices.Equal(got, []string{"pending", "held", "applied"}) {
			t.Fatalf("transitions of %s: %v, want pending held applied", r, got)
		}
	}
}
