package authz_test

import (
	"io"
	"log/slog"
	"net/http"
	"testing"

	"github.com/go-chi/chi/v5"

	"github.com/meshhq/hq/api"
	"github.com/meshhq/hq/authz"
	"github.com/meshhq/hq/db"
	"github.com/meshhq/hq/internal/teststore"
	"github.com/meshhq/hq/webui"
)

// Every route of the API and the pages has an entry in the table, and every entry is a route:
// a route added without one would be refused to everyone, and an entry without a route is a
// rule nobody checks.
func TestEveryRouteHasAnEntry(t *testing.T) {
	t.Parallel()
	r := chi.NewRouter()
	store := teststore.Open(t, db.Options{})
	(&api.Server{Store: store, Metrics: http.NotFoundHandler()}).Mount(r)
	ui, err := webui.New(store, "token", slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	ui.Routes(r)
	seen := map[string]bool{}
	err = chi.Walk(r, func(method, route string, _ http.Handler, _ ...func(http.Handler) http.Handler) error {
		key := method + " " + route
		seen[key] = true
		rule, ok := authz.Table[key]
		switch {
		case !ok:
			t.Errorf("%s has no entry in authz.Table", key)
		case rule.Need != authz.Read && rule.Need != authz.Open && rule.Need != authz.Node && rule.Action == "":
			t.Errorf("%s changes something but its entry names no audit action", key)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for key := range authz.Table {
		if !seen[key] {
			t.Errorf("authz.Table has %s, which is no route", key)
		}
	}
}
