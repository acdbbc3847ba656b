package api

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/db"
	"github.com/meshhq/hq/internal/teststore"
)

func TestPutModuleDryRunWritesNothing(t *testing.T) {
	f := setup(t)
	var plan hq.ModulePlan
	f.want(f.do("PUT", "/api/v1/modules/app?dry_run=true", admin, appModule), 200).json(t, &plan)
	if plan.Module != "app" || plan.Revision != 1 || plan.Unchanged || len(plan.Added) != 6 {
		t.Fatalf("plan %+v", plan)
	}
	f.want(f.do("GET", "/api/v1/modules/app", admin, nil), 404)
	f.want(f.do("PUT", "/api/v1/modules/app?dry_run=perhaps", admin, appModule), 400)
	f.want(f.do("PUT", "/api/v1/modules/app?dry_run=true", admin, `{"resources":[{"name":"x","kind":"nonsense"}]}`), 422)
	f.want(f.do("PUT", "/api/v1/modules/app?dry_run=false", admin, appModule), 201)
}

type countingObserver struct{ committed, refused int }

func (o *countingObserver) ObserveReport(committed bool, _ time.Duration) {
	if committed {
		o.committed++
	} else {
		o.refused++
	}
}

func TestMetricsRouteAndReportObserver(t *testing.T) {
	store := teststore.Open(t, db.Options{})
	obs := &countingObserver{}
	s := &Server{Store: store, AdminToken: admin, Instance: "test", Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
		MaxWait: time.Second, Reports: obs,
		Metrics: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "hq_up 1\n") })}
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()
	f := &fixture{t: t, srv: srv, store: store}
	f.want(f.do("GET", "/metrics", "", nil), 401)
	if r := f.want(f.do("GET", "/metrics", admin, nil), 200); string(r.body) != "hq_up 1\n" {
		t.Fatalf("/metrics: %q", r.body)
	}
	tok := f.node("web-1")
	f.want(f.do("POST", "/api/v1/nodes/web-1/reports", tok, `{"generation":0,"digest":"","results":[]}`), 200)
	f.want(f.do("POST", "/api/v1/nodes/web-1/reports", tok, `{"nonsense":1}`), 400)
	if obs.committed != 1 || obs.refused != 1 {
		t.Fatalf("observed %d committed, %d refused; want 1 and 1", obs.committed, obs.refused)
	}
}
