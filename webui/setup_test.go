package webui

import (
	"context"
	"github.com/meshhq/hq/internal/testclock"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/db"
	"github.com/meshhq/hq/internal/testdb"
	"github.com/meshhq/hq/internal/teststore"
	"github.com/meshhq/hq/seal"
)

const token = "operator-secret"

// clock is a settable time shared by the store and the pages.
type clock = testclock.Clock

// bundle is what a test drives: a store on its own database, the pages over it, and the clock.
type bundle struct {
	store   *db.Store
	ui      *UI
	handler http.Handler
	clock   *clock
	log     *strings.Builder
	// path names the database, for a fixture written in SQL.
	path string
}

func setup(tb testing.TB) *bundle {
	tb.Helper()
	c := testclock.At(time.Date(2026, 11, 30, 3, 0, 0, 0, time.UTC))
	path := testdb.New(tb)
	key, err := seal.NewKey()
	if err != nil {
		tb.Fatal(err)
	}
	s := teststore.OpenAt(tb, path, db.Options{Now: c.Now, StuckAttempts: 2, SecretsKey: seal.KeysOf(key)})
	logs := &strings.Builder{}
	u, err := New(s, token, slog.New(slog.NewTextHandler(logs, nil)))
	if err != nil {
		tb.Fatal(err)
	}
	u.Now = c.Now
	r := chi.NewRouter()
	u.Routes(r)
	return &bundle{store: s, ui: u, handler: r, clock: c, log: logs, path: path}
}

// get fetches path with the operator's token as basic auth.
func (b *bundle) get(tb testing.TB, path string) (int, string) {
	tb.Helper()
	req := httptest.NewRequest("GET", path, nil)
	req.SetBasicAuth("op", token)
	return b.do(req)
}

func (b *bundle) do(req *http.Request) (int, string) {
	w := httptest.NewRecorder()
	b.handler.ServeHTTP(w, req)
	body, _ := io.ReadAll(w.Result().Body)
	return w.Code, string(body)
}

func (b *bundle) node(tb testing.TB, name string) string {
	tb.Helper()
	tok, _, err := b.store.CreateNode(context.Background(), name)
	if err != nil {
		tb.Fatal(err)
	}
	return tok
}

func (b *bundle) module(tb testing.TB, name string, rs ...hq.Resource) {
	tb.Helper()
	if _, err := b.store.PutModule(context.Background(), name, rs); err != nil {
		tb.Fatal(err)
	}
}

func (b *bundle) assign(tb testing.TB, node, module string) {
	tb.Helper()
	if _, err := b.store.Assign(context.Background(), node, module, nil, nil); err != nil {
		tb.Fatal(err)
	}
}

// report composes the node's declaration and ingests results for it, as a host would.
func (b *bundle) report(tb testing.TB, node string, results ...hq.Result) {
	tb.Helper()
	ctx := context.Background()
	d, err := b.store.Compose(ctx, node, "test")
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := b.store.Ingest(ctx, node, hq.Report{SendID: d.SendID, Generation: d.Generation, Digest: d.Digest, Results: results}, db.IngestOptions{}); err != nil {
		tb.Fatal(err)
	}
}

func file(name string) hq.Resource {
	return hq.Resource{Name: name, Kind: hq.KindFile, Path: "/etc/" + name, Content: "x\n"}
}

func result(module, name string, outcome hq.State) hq.Result {
	return hq.Result{Module: module, Resource: name, Outcome: outcome, Attempted: outcome != hq.StateHeld}
}
