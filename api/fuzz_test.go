package api

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	jsonv2 "github.com/go-json-experiment/json"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/db"
)

// fuzzBed is one store and the real handler over it, opened once per fuzz target and shared by
// every input, with a read-only connection of its own to look at the database.
type fuzzBed struct {
	store   *db.Store
	handler http.Handler
	raw     *sql.DB
	// last is the state after the last request: nothing else writes, so it is the state before
	// the next one, and each input costs one look at the database rather than two.
	last string
}

func newFuzzBed(f *testing.F) *fuzzBed {
	f.Helper()
	path := filepath.Join(f.TempDir(), "hq.db")
	// A still clock and no workers (there are no other processes, and each report commits
	// alone): the code an input runs then depends on the input and the database alone, and
	// the fuzzer does not chase coverage that came from the time of day.
	now := time.Date(2026, 12, 1, 3, 0, 0, 0, time.UTC)
	store, err := db.Open(context.Background(), path, db.Options{Now: func() time.Time { return now }})
	if err != nil {
		f.Fatal(err)
	}
	raw, err := sql.Open("sqlite", "file:"+path+"?mode=ro&_pragma=busy_timeout(10000)")
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { raw.Close(); store.Close() })
	_, key, _ := ed25519.GenerateKey(rand.Reader)
	s := &Server{Store: store, AdminToken: admin, Instance: "fuzz", Key: key,
		Log: slog.New(slog.NewTextHandler(io.Discard, nil)), MaxWait: time.Second}
	return &fuzzBed{store: store, handler: s.Handler(), raw: raw}
}

func (b *fuzzBed) serve(method, path, token string, body []byte) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, path, bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	w := httptest.NewRecorder()
	b.handler.ServeHTTP(w, req)
	return w
}

// must serves a setup request and fails unless it answers want.
func (b *fuzzBed) must(tb testing.TB, method, path, token, body string, want int) []byte {
	tb.Helper()
	w := b.serve(method, path, token, []byte(body))
	if w.Code != want {
		tb.Fatalf("%s %s: %d, want %d: %s", method, path, w.Code, want, w.Body)
	}
	return w.Body.Bytes()
}

// whole lists the tables kept whole in a state; every other table is counted. What a request
// could change without adding a row (a generation, a resource's state or counts, a send's
// outcome, a repeat of the last report) lives in these, and they stay small under fuzzing.
var whole = map[string]string{
	"nodes":           "name",
	"modules":         "name",
	"assignments":     "node, module",
	"resource_states": "node, module, resource",
	"sends":           "id",
	"web_sessions":    "id_hash",
}

// state describes the database: every table's row count, the whole of the small tables, and
// the newest report. Two equal states mean a request changed nothing an operator could see.
func (b *fuzzBed) state(tb testing.TB) string {
	tb.Helper()
	var out strings.Builder
	// The audit log records the refusal too: that is the one row a refused request adds.
	tables, err := b.column(`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name <> 'audit_log' ORDER BY name`)
	if err != nil {
		tb.Fatal(err)
	}
	for _, t := range tables {
		n, err := b.column(fmt.Sprintf(`SELECT COUNT(*) FROM %q`, t))
		if err != nil {
			tb.Fatal(err)
		}
		fmt.Fprintf(&out, "%s: %s rows\n", t, n[0])
		query := ""
		if order, ok := whole[t]; ok {
			query = fmt.Sprintf(`SELECT * FROM %q ORDER BY %s`, t, order)
		} else if t == "reports" {
			query = `SELECT * FROM reports ORDER BY id DESC LIMIT 1`
		}
		if query != "" {
			if err := b.rows(&out, t, query); err != nil {
				tb.Fatal(err)
			}
		}
	}
	return out.String()
}

func (b *fuzzBed) column(query string) ([]string, error) {
	rows, err := b.raw.Query(query)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var v any
		if err := rows.Scan(&v); err != nil {
			return nil, err
		}
		out = append(out, fmt.Sprint(v))
	}
	return out, rows.Err()
}

func (b *fuzzBed) rows(out *strings.Builder, table, query string) error {
	rows, err := b.raw.Query(query)
	if err != nil {
		return err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return err
	}
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return err
		}
		fmt.Fprintf(out, "  %s %v\n", table, vals)
	}
	return rows.Err()
}

// check fails on a 5xx, on a 4xx that is not the API's error shape, and on a 4xx after which
// the database is not as it was before.
func (b *fuzzBed) check(t *testing.T, w *httptest.ResponseRecorder, body []byte) {
	t.Helper()
	before, after := b.last, b.state(t)
	b.last = after
	if w.Code >= 500 {
		t.Fatalf("%d for %q: %s", w.Code, body, w.Body)
	}
	if w.Code < 400 {
		return
	}
	var e struct{ Error hq.Error }
	if err := json.Unmarshal(w.Body.Bytes(), &e); err != nil || e.Error.Code == "" || e.Error.Message == "" {
		t.Fatalf("%d without an error body for %q: %s", w.Code, body, w.Body)
	}
	if after != before {
		t.Fatalf("%d (%s) for %q changed the database:\n%s", w.Code, e.Error.Message, body, diffLines(before, after))
	}
}

func diffLines(before, after string) string {
	a, z := strings.Split(before, "\n"), strings.Split(after, "\n")
	var out strings.Builder
	for i := range max(len(a), len(z)) {
		var x, y string
		if i < len(a) {
			x = a[i]
		}
		if i < len(z) {
			y = z[i]
		}
		if x != y {
			fmt.Fprintf(&out, "- %s\n+ %s\n", x, y)
		}
	}
	return out.String()
}

// FuzzPutModule sends arbitrary bodies to PUT /api/v1/modules/{module} through the real
// handler, decoder and store, for a module assigned to a node beside another module: never a
// 5xx, a refused upload changes nothing, and an accepted one is stored as it was sent.
func FuzzPutModule(f *testing.F) {
	b := newFuzzBed(f)
	tok := ""
	var reg struct{ Token string }
	if err := json.Unmarshal(b.must(f, "POST", "/api/v1/nodes", admin, `{"name":"web-1"}`, 201), &reg); err != nil || reg.Token == "" {
		f.Fatalf("registering web-1: token %q, %v", reg.Token, err)
	}
	tok = reg.Token
	b.must(f, "PUT", "/api/v1/modules/base", admin, `{"resources":[
		{"name":"motd","kind":"file","path":"/etc/motd","content":"hi\n"},
		{"name":"srv","kind":"directory","path":"/srv"},
		{"name":"gone","kind":"absent","path":"/etc/old"}]}`, 201)
	b.must(f, "PUT", "/api/v1/modules/app", admin, appModule, 201)
	for _, m := range []string{"base", "app"} {
		b.must(f, "PUT", "/api/v1/nodes/web-1/assignments/"+m, admin, `{"taken":false}`, 200)
	}
	b.must(f, "GET", "/api/v1/nodes/web-1/declaration", tok, "", 200) // a send, so sends are not empty

	for _, s := range []string{
		appModule,
		`{"resources":[]}`,
		`{"resources":[{"name":"a","kind":"file","path":"/srv/a","content_base64":"eA==","mode":"0600","group":"g","gate":true},{"name":"b","kind":"directory","path":"/srv/b","group":"g"}]}`,
		`{"resources":[{"name":"s","kind":"service","command":["{root}/bin/s"],"env":{"A":"b"},"restart_on":["c"],"health":{"http":"http://127.0.0.1:1/"}},{"name":"c","kind":"file","path":"/srv/c","validate":["grep","-q","x","{path}"]}]}`,
		`{"resources":[{"name":"l","kind":"symlink","path":"/srv/l","target":"../etc/motd"},{"name":"m","kind":"action","command":["/bin/true"],"gate":false}]}`,
		// near-valid: each is refused for one reason
		`{"resources":[{"name":"x","kind":"file","path":"/etc/motd/x","content":"under a file of base"}]}`,
		`{"resources":[{"name":"x","kind":"file","path":"/etc/motd"}]}`,
		`{"resources":[{"name":"x","kind":"absent","path":"/srv"}]}`,
		`{"resources":[{"name":"x","kind":"absent","path":"/x"},{"name":"y","kind":"file","path":"/x/y"}]}`,
		`{"resources":[{"name":"a","kind":"file","path":"/a"},{"name":"a","kind":"file","path":"/b"}]}`,
		`{"resources":[{"name":"a","kind":"file","path":"/a","colour":"red"}]}`,
		`{"resources":[{"name":"a","kind":"file","path":"/a"}]} {}`,
		`{"resources":[{"name":"a","kind":"file","path":"/a","name":"b"}]}`,
		`{"resources":[{"Name":"a","kind":"file","path":"/a"}]}`,
		`{"resources":[{"name":"a","kind":"file","path":"/a","content":"\udc00"}]}`,
		"{\"resources\":[{\"name\":\"a\",\"kind\":\"file\",\"path\":\"/a\",\"content\":\"\xff\"}]}",
		`{"resources":[{"name":"a","kind":"file","path":"/a/../b"}]}`,
		`{"resources":[{"name":"a","kind":"file","path":"/a","mode":"99999"}]}`,
		`{"resources":[{"name":"a","kind":"service","command":[""],"restart_on":["a"]}]}`,
		`{"resources":[{"name":"a","kind":"symlink","path":"/a","target":"../../x"}]}`,
		`{"resources":null}`,
		`{"resources":[null]}`,
		`{"resources":[{"name":"a","kind":"file","path":"/a","gate":1}]}`,
		`{}`,
		`[]`,
		``,
		`{"resources":[`,
	} {
		f.Add([]byte(s))
	}
	b.last = b.state(f)
	f.Fuzz(func(t *testing.T, body []byte) {
		w := b.serve("PUT", "/api/v1/modules/app", admin, body)
		b.check(t, w, body)
		if w.Code >= 300 {
			return
		}
		var sent struct {
			Resources []hq.Resource `json:"resources"`
		}
		if err := jsonv2.Unmarshal(body, &sent, jsonv2.RejectUnknownMembers(true)); err != nil {
			t.Fatalf("accepted %q, which does not decode: %v", body, err)
		}
		m, err := b.store.GetModule(context.Background(), "app")
		if err != nil {
			t.Fatal(err)
		}
		if err := hq.ValidateModule(m.Resources); err != nil {
			t.Fatalf("the stored module no longer validates: %v", err)
		}
		if len(m.Resources) != len(sent.Resources) {
			t.Fatalf("stored %d resource(s) of %d sent", len(m.Resources), len(sent.Resources))
		}
		for i := range sent.Resources {
			if m.Resources[i].Digest() != sent.Resources[i].Digest() {
				t.Fatalf("resource %d stored as %+v, sent as %+v", i, m.Resources[i], sent.Resources[i])
			}
		}
	})
}

// FuzzPostReport sends arbitrary bodies to POST /api/v1/nodes/{node}/reports with the node's
// own token, after a declaration was composed and signed for it: never a 5xx, and a refused
// report changes nothing.
func FuzzPostReport(f *testing.F) {
	b := newFuzzBed(f)
	var reg struct{ Token string }
	if err := json.Unmarshal(b.must(f, "POST", "/api/v1/nodes", admin, `{"name":"web-1"}`, 201), &reg); err != nil || reg.Token == "" {
		f.Fatalf("registering web-1: token %q, %v", reg.Token, err)
	}
	tok := reg.Token
	b.must(f, "PUT", "/api/v1/modules/app", admin, `{"resources":[
		{"name":"conf","kind":"file","path":"/etc/app/app.conf","content":"v1\n","group":"pair"},
		{"name":"unit","kind":"file","path":"/etc/app/unit","content":"u\n","group":"pair"},
		{"name":"dir","kind":"directory","path":"/var/lib/app"},
		{"name":"migrate","kind":"action","command":["/bin/true"]},
		{"name":"server","kind":"service","command":["{root}/bin/server"],"restart_on":["conf"]}]}`, 201)
	b.must(f, "PUT", "/api/v1/nodes/web-1/assignments/app", admin, `{"taken":false}`, 200)
	var d hq.Declaration
	if err := json.Unmarshal(b.must(f, "GET", "/api/v1/nodes/web-1/declaration?after=0", tok, "", 200), &d); err != nil {
		f.Fatal(err)
	}
	if d.SendID == 0 || d.Signature == "" {
		f.Fatalf("the declaration names no send or is unsigned: %+v", d)
	}

	results := func(outcome hq.State) []hq.Result {
		var rs []hq.Result
		for _, m := range d.Modules {
			for _, r := range m.Resources {
				rs = append(rs, hq.Result{Module: m.Name, Resource: r.Name, Outcome: outcome, Attempted: true, DurationMS: 3})
			}
		}
		return rs
	}
	at := time.Date(2026, 12, 1, 3, 0, 0, 0, time.UTC)
	report := func(edit func(*hq.Report)) []byte {
		rep := hq.Report{SendID: d.SendID, Generation: d.Generation, Digest: d.Digest, Signature: d.Signature,
			StartedAt: at, FinishedAt: at.Add(time.Second), Results: results(hq.StateApplied)}
		edit(&rep)
		body, err := json.Marshal(rep)
		if err != nil {
			f.Fatal(err)
		}
		return body
	}
	for _, s := range [][]byte{
		report(func(*hq.Report) {}),
		report(func(r *hq.Report) { r.Results = results(hq.StateFailed); r.Results[0].Error = "exit status 1" }),
		report(func(r *hq.Report) {
			r.Results = results(hq.StateHeld)
			r.Results[0].HoldReason = "would overwrite /etc/app/app.conf, found on this node"
			r.Results[0].Attempted = false
		}),
		report(func(r *hq.Report) { r.Results = results(hq.StateGroupedPending) }),
		report(func(r *hq.Report) { r.Results = results(hq.StatePending); r.Results[1].BlockedBy = "app/migrate" }),
		report(func(r *hq.Report) { r.Results[0].Drift = true }),
		report(func(r *hq.Report) { r.Results = r.Results[:2] }),
		report(func(r *hq.Report) {
			r.Refused = &hq.Refusal{Generation: d.Generation, Digest: d.Digest, SendID: d.SendID, ComposedBy: d.ComposedBy,
				ComposedAt: d.ComposedAt, Reason: "generation 1 is older than applied generation 2"}
		}),
		// near-valid: each is wrong in one way
		report(func(r *hq.Report) { r.SendID += 1000 }),
		report(func(r *hq.Report) { r.Digest = "sha256:" + strings.Repeat("0", 64) }),
		report(func(r *hq.Report) { r.Generation++ }),
		report(func(r *hq.Report) { r.Generation = -1 }),
		report(func(r *hq.Report) { r.Signature = "AAAA" }),
		report(func(r *hq.Report) { r.Results[0].Resource = "ghost" }),
		report(func(r *hq.Report) { r.Results[1] = r.Results[0] }),
		report(func(r *hq.Report) { r.Results[0].Outcome = hq.StateStuck }),
		report(func(r *hq.Report) { r.Results = append(r.Results, r.Results...) }),
		report(func(r *hq.Report) { r.Results[0].Module = "../x" }),
		report(func(r *hq.Report) { r.Results[0].Error = strings.Repeat("e", 5000) }),
		bytes.Replace(report(func(*hq.Report) {}), []byte(`"results"`), []byte(`"colour":1,"results"`), 1),
		append(report(func(*hq.Report) {}), []byte(" {}")...),
		[]byte(`{"generation":"1"}`),
		[]byte(`{}`),
		[]byte(`null`),
		[]byte(``),
	} {
		f.Add(s)
	}
	b.last = b.state(f)
	f.Fuzz(func(t *testing.T, body []byte) {
		w := b.serve("POST", "/api/v1/nodes/web-1/reports", tok, body)
		b.check(t, w, body)
	})
}
