package api

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/api/longpoll"
	"github.com/meshhq/hq/db"
	"github.com/meshhq/hq/internal/teststore"
	"github.com/meshhq/hq/internal/wait"
	"github.com/meshhq/hq/keys"
)

const admin = "operator-secret"

type fixture struct {
	t       testing.TB
	srv     *httptest.Server
	server  *Server
	handler http.Handler
	lot     *longpoll.Lot
	store   *db.Store
	key     ed25519.PrivateKey
	// keys is what the server signs with; a test rotates by storing others.
	keys atomic.Pointer[Keys]
}

func setup(t testing.TB) *fixture { t.Helper(); return setupServer(t, false, db.Options{}) }

// setupServer is setup with the store's options opt, serving HTTPS when https is set, as a
// controller with HQ_TLS_CERT does.
func setupServer(t testing.TB, https bool, opt db.Options) *fixture {
	t.Helper()
	return setupWith(t, https, opt, nil)
}

// setupWith is setupServer with the server's settings changed by configure before it serves.
func setupWith(t testing.TB, https bool, opt db.Options, configure func(*Server)) *fixture {
	t.Helper()
	store := teststore.Open(t, opt)
	_, key, _ := ed25519.GenerateKey(rand.Reader)
	f := &fixture{t: t, store: store, key: key}
	f.keys.Store(NewKeys(key, nil, nil))
	s := &Server{Store: store, AdminToken: admin, Instance: "test-instance", Keys: f.keys.Load,
		Log: slog.New(slog.NewTextHandler(io.Discard, nil)), MaxWait: 5 * time.Second}
	if configure != nil {
		configure(s)
	}
	f.server = s
	f.handler = s.Handler()
	// Served as the controller serves: waiting long-polls parked in a lot.
	f.srv = httptest.NewUnstartedServer(f.handler)
	s.Lot = longpoll.NewLot(f.srv.Listener.Addr(), 8)
	f.lot = s.Lot
	if https {
		f.srv.StartTLS()
	} else {
		f.srv.Start()
	}
	returned := make(chan error, 1)
	go func() { returned <- f.srv.Config.Serve(s.Lot.Returns()) }()
	t.Cleanup(func() {
		s.Lot.Close()
		<-returned
		f.srv.Close()
		store.Close()
	})
	return f
}

type response struct {
	status int
	header http.Header
	body   []byte
}

func (r response) json(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal(r.body, v); err != nil {
		t.Fatalf("response %d %s: %v", r.status, r.body, err)
	}
}

func (r response) errCode(t testing.TB) hq.Code {
	t.Helper()
	var e struct{ Error hq.Error }
	r.json(t, &e)
	return e.Error.Code
}

// do sends a request; body may be a string (sent as is) or a value (sent as JSON).
func (f *fixture) do(method, path, token string, body any, headers ...string) response {
	f.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		j, err := json.Marshal(b)
		if err != nil {
			f.t.Fatal(err)
		}
		rd = bytes.NewReader(j)
	}
	req, err := http.NewRequest(method, f.srv.URL+path, rd)
	if err != nil {
		f.t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := f.srv.Client().Do(req)
	if err != nil {
		f.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		f.t.Fatalf("%s %s: reading the answer: %v", method, path, err)
	}
	return response{status: resp.StatusCode, header: resp.Header, body: b}
}

func (f *fixture) want(r response, status int) response {
	f.t.Helper()
	if r.status != status {
		f.t.Fatalf("status %d, want %d: %s", r.status, status, r.body)
	}
	return r
}

// node registers a node and returns its token.
func (f *fixture) node(name string) string {
	f.t.Helper()
	var out struct{ Token string }
	f.want(f.do("POST", "/api/v1/nodes", admin, map[string]string{"name": name}), 201).json(f.t, &out)
	return out.Token
}

const appModule = `{"resources":[
 {"name":"conf","kind":"file","path":"/etc/app/app.conf","content":"v1\n","mode":"0644"},
 {"name":"dir","kind":"directory","path":"/var/lib/app"},
 {"name":"link","kind":"symlink","path":"/etc/app/current","target":"/etc/app/app.conf"},
 {"name":"old","kind":"absent","path":"/etc/app/old.conf"},
 {"name":"migrate","kind":"action","command":["/bin/true"]},
 {"name":"server","kind":"service","command":["{root}/bin/server"],"restart_on":["conf"],"health":{"http":"http://127.0.0.1:1/healthz"}}
]}`

func TestHealthzNeedsNoAuth(t *testing.T) {
	t.Parallel()
	f := setup(t)
	f.want(f.do("GET", "/healthz", "", nil), 200)
}

func TestAuth(t *testing.T) {
	t.Parallel()
	f := setup(t)
	tok1 := f.node("web-1")
	tok2 := f.node("web-2")
	if c := f.want(f.do("GET", "/api/v1/nodes", "", nil), 401).errCode(t); c != hq.CodeUnauthorized {
		t.Fatalf("code %s", c)
	}
	f.want(f.do("GET", "/api/v1/nodes", "wrong", nil), 401)
	f.want(f.do("GET", "/api/v1/nodes", tok1, nil), 403)
	f.want(f.do("PUT", "/api/v1/modules/app", tok1, appModule), 403)
	f.want(f.do("GET", "/api/v1/nodes/web-1/declaration?after=-0&wait=0s", tok2, nil), 403)
	f.want(f.do("POST", "/api/v1/nodes/web-1/reports", tok2, `{"generation":0,"digest":"","results":[]}`), 403)
	f.want(f.do("GET", "/api/v1/nodes/web-1/declaration?wait=0s", tok1, nil), 200)
	f.want(f.do("GET", "/api/v1/nodes/web-1/declaration?wait=0s", "nope", nil), 401)
	var st struct{ Nodes map[string]int }
	f.want(f.do("GET", "/api/v1/status", admin, nil), 200).json(t, &st)
	if st.Nodes["total"] != 2 || st.Nodes["new"] != 2 {
		t.Fatalf("status nodes %v", st.Nodes)
	}
	var list struct{ Nodes []hq.NodeView }
	f.want(f.do("GET", "/api/v1/nodes", admin, nil), 200).json(t, &list)
	if strings.Contains(string(f.do("GET", "/api/v1/nodes", admin, nil).body), tok1) {
		t.Fatal("a node token is readable after registration")
	}
}

func TestNodeLifecycle(t *testing.T) {
	t.Parallel()
	f := setup(t)
	f.node("web-1")
	if c := f.want(f.do("POST", "/api/v1/nodes", admin, `{"name":"web-1"}`), 409).errCode(t); c != hq.CodeConflict {
		t.Fatalf("code %s", c)
	}
	f.want(f.do("POST", "/api/v1/nodes", admin, `{"name":"../etc"}`), 422)
	f.want(f.do("POST", "/api/v1/nodes", admin, `{"name":"x","extra":1}`), 400)
	f.want(f.do("GET", "/api/v1/nodes/nope", admin, nil), 404)
	var v hq.NodeView
	r := f.want(f.do("GET", "/api/v1/nodes/web-1", admin, nil), 200)
	r.json(t, &v)
	if v.Status != hq.StatusNew || r.header.Get("ETag") != `"0"` {
		t.Fatalf("node %+v etag %q", v, r.header.Get("ETag"))
	}
	f.want(f.do("DELETE", "/api/v1/nodes/web-1", admin, nil, "If-Match", `"3"`), 409)
	f.want(f.do("DELETE", "/api/v1/nodes/web-1", admin, nil), 204)
	f.want(f.do("GET", "/api/v1/nodes/web-1", admin, nil), 404)
	f.want(f.do("DELETE", "/api/v1/nodes/web-1", admin, nil), 404)
}

// The acceptance path: register, upload, assign at generation 1, a stale If-Match is refused
// naming generation 1, a new revision is generation 2.
func TestGenerationsThroughTheAPI(t *testing.T) {
	t.Parallel()
	f := setup(t)
	f.node("web-1")
	f.want(f.do("PUT", "/api/v1/modules/app", admin, appModule), 201)
	var g struct{ Generation int64 }
	r := f.want(f.do("PUT", "/api/v1/nodes/web-1/assignments/app", admin, `{"taken":false}`), 200)
	r.json(t, &g)
	if g.Generation != 1 || r.header.Get("ETag") != `"1"` {
		t.Fatalf("assign: %+v %q", g, r.header.Get("ETag"))
	}
	r = f.want(f.do("PUT", "/api/v1/nodes/web-1/assignments/app", admin, `{"taken":true}`, "If-Match", `"0"`), 409)
	var e struct{ Error hq.Error }
	r.json(t, &e)
	if e.Error.Generation == nil || *e.Error.Generation != 1 || r.header.Get("ETag") != `"1"` {
		t.Fatalf("conflict: %s", r.body)
	}
	f.want(f.do("PUT", "/api/v1/nodes/web-1/assignments/app", admin, `{"taken":false}`, "If-Match", `not-a-number`), 400)
	f.want(f.do("PUT", "/api/v1/modules/app", admin, strings.Replace(appModule, "v1", "v2", 1)), 201)
	var v hq.NodeView
	f.want(f.do("GET", "/api/v1/nodes/web-1", admin, nil), 200).json(t, &v)
	if v.Generation != 2 || v.Assignments[0].Revision != 2 || v.Assignments[0].Taken {
		t.Fatalf("after new revision: generation %d, assignments %+v", v.Generation, v.Assignments)
	}
	f.want(f.do("POST", "/api/v1/nodes/web-1/assignments/app/take", admin, nil, "If-Match", `"2"`), 200)
	f.want(f.do("DELETE", "/api/v1/nodes/web-1/assignments/app", admin, nil), 200)
	f.want(f.do("DELETE", "/api/v1/nodes/web-1/assignments/app", admin, nil), 404)
	f.want(f.do("PUT", "/api/v1/nodes/web-1/assignments/nope", admin, nil), 404)
	f.want(f.do("POST", "/api/v1/nodes/web-1/assignments/app/take", admin, nil), 404)
}

// Every bad input answers its code and writes nothing.
func TestBadInputChangesNothing(t *testing.T) {
	t.Parallel()
	f := setup(t)
	f.node("web-1")
	f.want(f.do("PUT", "/api/v1/modules/app", admin, appModule), 201)
	f.want(f.do("PUT", "/api/v1/nodes/web-1/assignments/app", admin, nil), 200)
	before := f.do("GET", "/api/v1/nodes/web-1", admin, nil).body
	beforeMod := f.do("GET", "/api/v1/modules/app", admin, nil).body
	huge := `{"resources":[{"name":"a","kind":"file","path":"/a","content":"` + strings.Repeat("x", maxBody) + `"}]}`
	cases := []struct {
		name, body string
		status     int
		field      string
	}{
		{"malformed", `{"resources":[`, 400, ""},
		{"trailing", `{"resources":[]} {}`, 400, ""},
		{"unknown field", `{"resources":[{"name":"a","kind":"file","path":"/a","colour":"red"}]}`, 400, ""},
		{"empty", ``, 400, ""},
		{"too large", huge, 413, ""},
		{"no resources", `{}`, 422, "resources"},
		{"relative path", `{"resources":[{"name":"a","kind":"file","path":"etc/a"}]}`, 422, "resources[0].path"},
		{"dot dot", `{"resources":[{"name":"a","kind":"file","path":"/etc/../a"}]}`, 422, "resources[0].path"},
		{"unknown kind", `{"resources":[{"name":"a","kind":"vm"}]}`, 422, "resources[0].kind"},
		{"bad name", `{"resources":[{"name":"a/b","kind":"directory","path":"/a"}]}`, 422, "resources[0].name"},
		{"duplicate name", `{"resources":[{"name":"a","kind":"directory","path":"/a"},{"name":"a","kind":"directory","path":"/b"}]}`, 422, "resources[1].name"},
		{"field of another kind", `{"resources":[{"name":"a","kind":"directory","path":"/a","content":"x"}]}`, 422, "resources[0].content"},
		{"bad mode", `{"resources":[{"name":"a","kind":"file","path":"/a","mode":"rwx"}]}`, 422, "resources[0].mode"},
		{"no command", `{"resources":[{"name":"a","kind":"action"}]}`, 422, "resources[0].command"},
		{"restart_on unknown", `{"resources":[{"name":"s","kind":"service","command":["x"],"restart_on":["ghost"]}]}`, 422, "resources[0].restart_on"},
		{"bad base64", `{"resources":[{"name":"a","kind":"file","path":"/a","content_base64":"%%%"}]}`, 422, "resources[0].content_base64"},
		{"symlink without target", `{"resources":[{"name":"a","kind":"symlink","path":"/a"}]}`, 422, "resources[0].target"},
		{"absent above a file", `{"resources":[{"name":"x","kind":"absent","path":"/x"},{"name":"y","kind":"file","path":"/x/y"}]}`, 422, "resources[1].path"},
		{"a file used as a directory", `{"resources":[{"name":"a","kind":"file","path":"/etc/same/child"},{"name":"b","kind":"file","path":"/etc/same"}]}`, 422, "resources[0].path"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := f.want(f.do("PUT", "/api/v1/modules/app", admin, c.body), c.status)
			var e struct{ Error hq.Error }
			r.json(t, &e)
			if e.Error.Message == "" {
				t.Fatalf("no message: %s", r.body)
			}
			if c.field != "" && (len(e.Error.Details) == 0 || e.Error.Details[0].Field != c.field) {
				t.Fatalf("details %+v, want field %s", e.Error.Details, c.field)
			}
		})
	}
	f.want(f.do("PUT", "/api/v1/modules/bad%20name", admin, `{"resources":[]}`), 422)
	f.want(f.do("GET", "/api/v1/nodes/web-1/transitions?limit=0", admin, nil), 400)
	if after := f.do("GET", "/api/v1/nodes/web-1", admin, nil).body; !bytes.Equal(before, after) {
		t.Fatalf("the node changed:\n%s\n%s", before, after)
	}
	if after := f.do("GET", "/api/v1/modules/app", admin, nil).body; !bytes.Equal(beforeMod, after) {
		t.Fatal("the module changed")
	}
}

func TestDeclarationLongPollAndReport(t *testing.T) {
	f := setup(t)
	tok := f.node("web-1")
	f.want(f.do("PUT", "/api/v1/modules/app", admin, appModule), 201)
	f.want(f.do("GET", "/api/v1/nodes/web-1/declaration?after=0&wait=10ms", tok, nil), 304)
	f.want(f.do("GET", "/api/v1/nodes/web-1/declaration?after=x", tok, nil), 400)

	got := make(chan response, 1)
	go func() { got <- f.do("GET", "/api/v1/nodes/web-1/declaration?after=0&wait=5s", tok, nil) }()
	wait.For(t, 5*time.Second, "the long-poll to wait", func() bool { return f.server.Waiting() == 1 })
	start := time.Now()
	f.want(f.do("PUT", "/api/v1/nodes/web-1/assignments/app", admin, nil), 200)
	r := f.want(<-got, 200)
	if waited := time.Since(start); waited > 2*time.Second {
		t.Fatalf("the long-poll woke %s after the change", waited)
	}
	var d hq.Declaration
	r.json(t, &d)
	sig, err := base64.StdEncoding.DecodeString(d.Signature)
	if err != nil {
		t.Fatalf("signature %q: %v", d.Signature, err)
	}
	if d.Generation != 1 || d.Digest != d.ComputeDigest() || !ed25519.Verify(f.key.Public().(ed25519.PublicKey), keys.DeclarationStatement(d.Node, d.Generation, d.Digest), sig) {
		t.Fatalf("declaration %+v does not verify", d)
	}
	results := []hq.Result{}
	for _, res := range d.Modules[0].Resources {
		results = append(results, hq.Result{Module: "app", Resource: res.Name, Outcome: hq.StateApplied, Attempted: true})
	}
	var rr hq.ReportResponse
	f.want(f.do("POST", "/api/v1/nodes/web-1/reports", tok, hq.Report{SendID: d.SendID, Generation: 1, Digest: d.Digest, Signature: d.Signature, Results: results}), 200).json(t, &rr)
	if rr.Summary != "applied 6 resource(s)" || rr.ReportID == 0 || rr.Generation != 1 {
		t.Fatalf("report response %+v", rr)
	}
	f.want(f.do("POST", "/api/v1/nodes/web-1/reports", tok, hq.Report{SendID: d.SendID, Generation: 1, Digest: d.Digest, Signature: d.Signature, Results: results}, "If-Match", `"0"`), 409)
	var v hq.NodeView
	f.want(f.do("GET", "/api/v1/nodes/web-1", admin, nil), 200).json(t, &v)
	if v.Status != hq.StatusConverged || v.AppliedGeneration != 1 || v.LastReport.Summary != rr.Summary {
		t.Fatalf("node %+v", v)
	}
	f.want(f.do("POST", "/api/v1/nodes/web-1/reports", tok, `{"generation":1,"digest":"","results":[{"module":"app","resource":"conf","outcome":"stuck"}]}`), 422)
	f.want(f.do("POST", "/api/v1/nodes/web-1/reports", tok, `{"generation":1,"results":[],"extra":true}`), 400)
	var sends struct{ Sends []hq.SendView }
	f.want(f.do("GET", "/api/v1/nodes/web-1/sends", admin, nil), 200).json(t, &sends)
	if len(sends.Sends) != 1 || sends.Sends[0].Outcome != "applied" || sends.Sends[0].ComposedBy != "test-instance" {
		t.Fatalf("sends %+v", sends)
	}
	var reps struct{ Reports []hq.ReportView }
	f.want(f.do("GET", "/api/v1/nodes/web-1/reports?limit=5", admin, nil), 200).json(t, &reps)
	var trs struct{ Transitions []hq.TransitionView }
	f.want(f.do("GET", "/api/v1/nodes/web-1/transitions", admin, nil), 200).json(t, &trs)
	if len(reps.Reports) != 1 || len(trs.Transitions) != 12 {
		t.Fatalf("%d reports, %d transitions; want 1 and 12", len(reps.Reports), len(trs.Transitions))
	}
	var key struct{ Key string }
	f.want(f.do("GET", "/api/v1/controller-key", "", nil), 200).json(t, &key)
	if pub, err := base64.StdEncoding.DecodeString(key.Key); err != nil || !bytes.Equal(pub, f.key.Public().(ed25519.PublicKey)) {
		t.Fatalf("controller-key %q is not the signing key (%v)", key.Key, err)
	}
}

func TestRetry(t *testing.T) {
	t.Parallel()
	f := setup(t)
	tok := f.node("web-1")
	f.want(f.do("PUT", "/api/v1/modules/app", admin, `{"resources":[{"name":"conf","kind":"file","path":"/a"}]}`), 201)
	f.want(f.do("PUT", "/api/v1/nodes/web-1/assignments/app", admin, nil), 200)
	var d hq.Declaration
	f.want(f.do("GET", "/api/v1/nodes/web-1/declaration", tok, nil), 200).json(t, &d)
	fail := hq.Report{SendID: d.SendID, Generation: 1, Digest: d.Digest, Signature: d.Signature, Results: []hq.Result{{Module: "app", Resource: "conf", Outcome: hq.StateFailed, Attempted: true, Error: "boom"}}}
	f.want(f.do("POST", "/api/v1/nodes/web-1/reports", tok, fail), 200)
	f.want(f.do("POST", "/api/v1/nodes/web-1/resources/app/nope/retry", admin, nil), 404)
	f.want(f.do("POST", "/api/v1/nodes/web-1/resources/app/conf/retry", admin, nil), 200)
	f.want(f.do("POST", "/api/v1/nodes/web-1/resources/app/conf/retry", admin, nil), 409) // pending now
	var rr hq.ReportResponse
	f.want(f.do("POST", "/api/v1/nodes/web-1/reports", tok, fail), 200).json(t, &rr)
	if len(rr.Retry) != 1 || rr.Retry[0] != "app/conf" {
		t.Fatalf("report response retry = %v", rr.Retry)
	}
	var v hq.NodeView
	f.want(f.do("GET", "/api/v1/nodes/web-1", admin, nil), 200).json(t, &v)
	if v.Resources[0].ConsecutiveFailures != 1 {
		t.Fatalf("after retry and one failure: %+v", v.Resources[0])
	}
}

// Two operators change the same node at once from the same generation: exactly one wins.
func TestIfMatchRaceOverHTTP(t *testing.T) {
	t.Parallel()
	f := setup(t)
	f.node("web-1")
	for round := range 10 {
		mods := []string{fmt.Sprintf("a%d", round), fmt.Sprintf("b%d", round)}
		for _, m := range mods {
			f.want(f.do("PUT", "/api/v1/modules/"+m, admin, `{"resources":[]}`), 201)
		}
		etag := f.want(f.do("GET", "/api/v1/nodes/web-1", admin, nil), 200).header.Get("ETag")
		statuses := make([]int, 2)
		var wg sync.WaitGroup
		for i, m := range mods {
			wg.Go(func() {
				statuses[i] = f.do("PUT", "/api/v1/nodes/web-1/assignments/"+m, admin, nil, "If-Match", etag).status
			})
		}
		wg.Wait()
		slices.Sort(statuses)
		if statuses[0] != 200 || statuses[1] != 409 {
			t.Fatalf("round %d: statuses %v, want one 200 and one 409", round, statuses)
		}
	}
}

// An operator may read a node's declaration; that is not a delivery and records no send.
func TestOperatorReadsDeclarationWithoutASend(t *testing.T) {
	t.Parallel()
	f := setup(t)
	f.node("web-1")
	f.want(f.do("PUT", "/api/v1/modules/app", admin, appModule), 201)
	f.want(f.do("PUT", "/api/v1/nodes/web-1/assignments/app", admin, nil), 200)
	var d hq.Declaration
	f.want(f.do("GET", "/api/v1/nodes/web-1/declaration", admin, nil), 200).json(t, &d)
	if d.Generation != 1 || len(d.Modules) != 1 || d.SendID != 0 {
		t.Fatalf("declaration %+v", d)
	}
	var sends struct{ Sends []hq.SendView }
	f.want(f.do("GET", "/api/v1/nodes/web-1/sends", admin, nil), 200).json(t, &sends)
	if len(sends.Sends) != 0 {
		t.Fatalf("an operator's read was recorded as a send: %+v", sends.Sends)
	}
}

// The router's own errors answer in the API's error shape.
func TestRouterErrorsAreJSON(t *testing.T) {
	t.Parallel()
	f := setup(t)
	for _, c := range []struct {
		method, path string
		status       int
		code         hq.Code
	}{
		{"GET", "/api/v1/nope", 404, hq.CodeNotFound},
		{"DELETE", "/api/v1/status", 405, hq.CodeMethodNotAllowed},
		{"POST", "/healthz", 405, hq.CodeMethodNotAllowed},
	} {
		r := f.want(f.do(c.method, c.path, admin, nil), c.status)
		if got := r.errCode(t); got != c.code {
			t.Errorf("%s %s: code %s, want %s", c.method, c.path, got, c.code)
		}
	}
	if r := f.want(f.do("GET", "/api/v1/nodes", "", nil), 401); r.header.Get("WWW-Authenticate") == "" {
		t.Error("a 401 without WWW-Authenticate")
	}
}

// A report of a declaration this database does not know raises the node's generation only
// when the controller's own key signed it; forged or foreign signatures are refused.
func TestReportSignatureDecidesTheGenerationRaise(t *testing.T) {
	t.Parallel()
	f := setup(t)
	tok := f.node("web-1")
	digest := "sha256:" + strings.Repeat("ab", 32)
	rep := hq.Report{SendID: 99, Generation: 42, Digest: digest}
	_, other, _ := ed25519.GenerateKey(rand.Reader)
	for _, sig := range []string{"", "bm90IGEgc2lnbmF0dXJl", base64.StdEncoding.EncodeToString(ed25519.Sign(other, keys.DeclarationStatement("web-1", 42, digest)))} {
		rep.Signature = sig
		f.want(f.do("POST", "/api/v1/nodes/web-1/reports", tok, rep), 422)
	}
	var v hq.NodeView
	f.want(f.do("GET", "/api/v1/nodes/web-1", admin, nil), 200).json(t, &v)
	if v.Generation != 0 {
		t.Fatalf("generation %d after refused reports", v.Generation)
	}
	rep.Signature = base64.StdEncoding.EncodeToString(ed25519.Sign(f.key, keys.DeclarationStatement("web-1", 42, digest)))
	// The signature binds the node and the generation: the same one for another generation, or
	// on another node's route, moves nothing.
	wedge := rep
	wedge.Generation = 9223372036854775806
	f.want(f.do("POST", "/api/v1/nodes/web-1/reports", tok, wedge), 422)
	tok2 := f.node("web-2")
	f.want(f.do("POST", "/api/v1/nodes/web-2/reports", tok2, rep), 422)
	var rr hq.ReportResponse
	f.want(f.do("POST", "/api/v1/nodes/web-1/reports", tok, rep), 200).json(t, &rr)
	if rr.Generation != 43 {
		t.Fatalf("generation %d after a signed report of generation 42, want 43", rr.Generation)
	}
}

// Every node-scoped answer carries the node's generation as its ETag, errors about a known
// node included.
func TestNodeScopedAnswersCarryTheETag(t *testing.T) {
	t.Parallel()
	f := setup(t)
	tok := f.node("web-1")
	f.want(f.do("PUT", "/api/v1/modules/app", admin, `{"resources":[{"name":"conf","kind":"file","path":"/a"}]}`), 201)
	f.want(f.do("PUT", "/api/v1/nodes/web-1/assignments/app", admin, `{"taken":true}`), 200)
	// No body keeps the taken flag and the generation.
	if r := f.want(f.do("PUT", "/api/v1/nodes/web-1/assignments/app", admin, nil), 200); r.header.Get("ETag") != `"1"` {
		t.Fatalf("a bodiless assign moved the generation: ETag %s", r.header.Get("ETag"))
	}
	var v hq.NodeView
	f.want(f.do("GET", "/api/v1/nodes/web-1", admin, nil), 200).json(t, &v)
	if !v.Assignments[0].Taken {
		t.Fatal("a bodiless assign un-took the module")
	}
	var d hq.Declaration
	f.want(f.do("GET", "/api/v1/nodes/web-1/declaration", tok, nil), 200).json(t, &d)
	fail := hq.Report{SendID: d.SendID, Generation: 1, Digest: d.Digest, Signature: d.Signature, Results: []hq.Result{{Module: "app", Resource: "conf", Outcome: hq.StateFailed, Attempted: true, Error: "boom"}}}
	f.want(f.do("POST", "/api/v1/nodes/web-1/reports", tok, fail), 200)
	for _, c := range []struct {
		method, path string
		status       int
	}{
		{"POST", "/api/v1/nodes/web-1/resources/app/nope/retry", 404},
		{"POST", "/api/v1/nodes/web-1/resources/app/conf/retry", 200},
		{"POST", "/api/v1/nodes/web-1/resources/app/conf/retry", 409},
		{"PUT", "/api/v1/nodes/web-1/assignments/nope", 404},
		{"GET", "/api/v1/nodes/web-1/sends", 200},
		{"GET", "/api/v1/nodes/web-1/reports", 200},
		{"GET", "/api/v1/nodes/web-1/transitions", 200},
		{"DELETE", "/api/v1/nodes/web-1", 204},
	} {
		if r := f.want(f.do(c.method, c.path, admin, nil), c.status); r.header.Get("ETag") != `"1"` {
			t.Errorf("%s %s: ETag %q, want \"1\"", c.method, c.path, r.header.Get("ETag"))
		}
	}
}

// An invalid name is a 422 with a detail naming the field, like every other 422.
func TestInvalidNamesHaveDetails(t *testing.T) {
	t.Parallel()
	f := setup(t)
	for _, c := range []struct{ method, path, body string }{
		{"POST", "/api/v1/nodes", `{"name":"../x"}`},
		{"PUT", "/api/v1/modules/-bad", `{"resources":[]}`},
	} {
		var e struct{ Error hq.Error }
		f.want(f.do(c.method, c.path, admin, c.body), 422).json(t, &e)
		if len(e.Error.Details) == 0 {
			t.Errorf("%s %s: 422 without details: %+v", c.method, c.path, e.Error)
		}
	}
}

// GET /nodes pages through the mesh in name order and filters by status, counting every node.
func TestListNodesPagesAndFilters(t *testing.T) {
	t.Parallel()
	f := setup(t)
	for i := range 5 {
		f.node(fmt.Sprintf("web-%d", i))
	}
	var page struct {
		Nodes  []hq.NodeView
		Next   string
		Counts map[string]int
		Total  int
	}
	f.want(f.do("GET", "/api/v1/nodes?limit=2", admin, nil), 200).json(t, &page)
	if len(page.Nodes) != 2 || page.Nodes[0].Name != "web-0" || page.Next != "web-1" || page.Total != 5 || page.Counts["new"] != 5 {
		t.Fatalf("first page %+v", page)
	}
	var names []string
	for cursor := ""; ; {
		page.Next = ""
		f.want(f.do("GET", "/api/v1/nodes?limit=2&cursor="+cursor, admin, nil), 200).json(t, &page)
		for _, n := range page.Nodes {
			names = append(names, n.Name)
		}
		if cursor = page.Next; cursor == "" {
			break
		}
	}
	if strings.Join(names, ",") != "web-0,web-1,web-2,web-3,web-4" {
		t.Fatalf("paged through %v", names)
	}
	f.want(f.do("GET", "/api/v1/nodes?status=converged", admin, nil), 200).json(t, &page)
	if len(page.Nodes) != 0 {
		t.Fatalf("converged filter: %+v", page.Nodes)
	}
	f.want(f.do("GET", "/api/v1/nodes?status=not-converged&limit=3", admin, nil), 200).json(t, &page)
	if len(page.Nodes) != 3 {
		t.Fatalf("not-converged filter: %d nodes", len(page.Nodes))
	}
	f.want(f.do("GET", "/api/v1/nodes?status=bogus", admin, nil), 400)
}
