package e2e

import (
	"bytes"
	"crypto/tls"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/internal/testdb"
)

// proxy stands between hosts and controllers: it forwards every request, round-robin over
// its targets, keeps every declaration it forwarded, and can answer with a captured or
// tampered one instead.
type proxy struct {
	targets []string
	next    atomic.Int64
	mu      sync.Mutex
	seen    map[int64][]byte // declarations by generation
	replay  []byte           // when set, every declaration request gets this
	tamper  func([]byte) []byte
}

// newProxy serves over HTTPS with the suite's certificate, as the controllers behind it do,
// so hosts reach it as they reach a controller.
func newProxy(t *testing.T, targets ...string) (*proxy, string) {
	p := &proxy{targets: targets, seen: map[int64][]byte{}}
	cert, err := tls.LoadX509KeyPair(suite.cert, suite.key)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(p)
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return p, srv.URL
}

func (p *proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	isDecl := strings.HasSuffix(r.URL.Path, "/declaration")
	p.mu.Lock()
	replay, tamper := p.replay, p.tamper
	p.mu.Unlock()
	if isDecl && replay != nil {
		w.Header().Set("Content-Type", "application/json")
		w.Write(replay)
		return
	}
	target := p.targets[int(p.next.Add(1))%len(p.targets)]
	req, _ := http.NewRequestWithContext(r.Context(), r.Method, target+r.URL.RequestURI(), r.Body)
	req.Header = r.Header.Clone()
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if isDecl && resp.StatusCode == http.StatusOK {
		var d struct{ Generation int64 }
		json.Unmarshal(body, &d)
		p.mu.Lock()
		p.seen[d.Generation] = body
		p.mu.Unlock()
		if tamper != nil {
			body = tamper(body)
		}
	}
	for k, v := range resp.Header {
		if k != "Content-Length" {
			w.Header()[k] = v
		}
	}
	w.WriteHeader(resp.StatusCode)
	w.Write(body)
}

func (p *proxy) set(replay []byte, tamper func([]byte) []byte) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.replay, p.tamper = replay, tamper
}

func (p *proxy) captured(gen int64) []byte {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.seen[gen]
}

func fileModule(name string) hq.Resource {
	return hq.Resource{Name: "f", Kind: hq.KindFile, Path: "/etc/" + name, Content: name + "\n"}
}

// Seed 204: a declaration captured at generation G and replayed after G+1 applied is refused,
// recorded and visible; so is a tampered one. Nothing on disk changes for either.
func TestStaleAndTamperedDeclarationsAreRefused(t *testing.T) {
	ctl := startPair(t, testdb.New(t))
	c := ctl.client(t)
	px, pxURL := newProxy(t, ctl.a.url, ctl.b.url)
	h := newHost(t, c, pxURL, "n1", "HOSTD_WAIT=1s")
	for _, m := range []string{"m1", "m2", "m3"} {
		c.putModule(m, fileModule(m))
	}
	converged := func(gen int64) func() bool {
		return func() bool { v := c.node("n1"); return v.Status == hq.StatusConverged && v.AppliedGeneration == gen }
	}
	c.assign("n1", "m1", false)
	waitFor(t, 20*time.Second, "generation 1 applied", converged(1))
	c.assign("n1", "m2", false)
	waitFor(t, 20*time.Second, "generation 2 applied", converged(2))
	stale := px.captured(1)
	if stale == nil {
		t.Fatal("the proxy did not capture generation 1")
	}

	px.set(stale, nil)
	waitFor(t, 20*time.Second, "the replayed send refused", func() bool {
		return slices.ContainsFunc(c.sends("n1"), func(s hq.SendView) bool { return s.Generation == 1 && s.Outcome == "refused" })
	})
	if got := readFile(filepath.Join(h.root, "etc/m2")); got != "m2\n" {
		t.Fatalf("the stale declaration removed m2: %q", got)
	}
	v := c.node("n1")
	if l := findLine(v.Lines, "refused declaration generation 1 (applied 2) composed by "); l == "" {
		t.Fatalf("lines %q", v.Lines)
	}
	if st := c.status(); len(st.RefusedSends) != 1 || st.RefusedSends[0].Node != "n1" || st.RefusedSends[0].Generation != 1 {
		t.Fatalf("/status refused_sends %+v", st.RefusedSends)
	}

	// Tampered in flight: one byte of the content changed, the digest left as it was.
	px.set(nil, func(b []byte) []byte { return bytes.Replace(b, []byte(`"m3\n"`), []byte(`"m4\n"`), 1) })
	c.assign("n1", "m3", false)
	waitFor(t, 20*time.Second, "the tampered send refused", func() bool {
		return slices.ContainsFunc(c.sends("n1"), func(s hq.SendView) bool { return s.Generation == 3 && s.Outcome == "refused" })
	})
	if _, err := os.Stat(filepath.Join(h.root, "etc/m3")); !os.IsNotExist(err) {
		t.Fatalf("a tampered declaration was applied: %v", err)
	}
	// A declaration that does not verify says nothing about the generation: once the path is
	// clean again the host fetches generation 3 itself.
	px.set(nil, nil)
	waitFor(t, 20*time.Second, "generation 3 applied", converged(3))
	if got := readFile(filepath.Join(h.root, "etc/m3")); got != "m3\n" {
		t.Fatalf("m3 = %q", got)
	}
}

var appliedRE = regexp.MustCompile(`msg="new declaration" generation=(\d+)`)

// Two controllers on one database take writes at once, and hosts long-poll through both: no
// host ever applies a generation older than one it applied, and the end state is the last change.
func TestTwoControllersNeverSendAnOlderGeneration(t *testing.T) {
	db := testdb.New(t)
	a := startController(t, db)
	b := startController(t, db)
	clients := []*client{newClient(t, a.url), newClient(t, b.url)}
	_, pxURL := newProxy(t, a.url, b.url)
	nodes := []string{"n1", "n2", "n3"}
	hosts := map[string]*host{}
	for _, n := range nodes {
		hosts[n] = newHost(t, clients[0], pxURL, n, "HOSTD_WAIT=1s")
	}
	mods := []string{"m0", "m1", "m2", "m3"}
	for _, m := range mods {
		clients[1].putModule(m, fileModule(m))
	}
	want := map[string]map[string]bool{}
	for _, n := range nodes {
		want[n] = map[string]bool{}
	}
	for i := range 40 {
		c := clients[i%2]
		n, m := nodes[i%3], mods[(i/3)%4]
		if want[n][m] {
			c.unassign(n, m)
		} else {
			c.assign(n, m, false)
		}
		want[n][m] = !want[n][m]
		time.Sleep(time.Duration(20+i%5*20) * time.Millisecond)
	}
	for _, n := range nodes {
		waitFor(t, 30*time.Second, n+" converged on the last change", func() bool {
			v := clients[0].node(n)
			return v.Status == hq.StatusConverged && v.AppliedGeneration == v.Generation
		})
		for _, m := range mods {
			_, err := os.Stat(filepath.Join(hosts[n].root, "etc", m))
			if exists := err == nil; exists != want[n][m] {
				t.Fatalf("%s: /etc/%s exists=%v, want %v", n, m, exists, want[n][m])
			}
		}
		var gens []int64
		for _, m := range appliedRE.FindAllStringSubmatch(hosts[n].out.String(), -1) {
			g, _ := strconv.ParseInt(m[1], 10, 64)
			gens = append(gens, g)
		}
		for i := 1; i < len(gens); i++ {
			if gens[i] <= gens[i-1] {
				t.Fatalf("%s applied generation %d after %d: %v", n, gens[i], gens[i-1], gens)
			}
		}
		if len(gens) == 0 {
			t.Fatalf("%s applied nothing", n)
		}
	}
}
