package client

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/api"
	"github.com/meshhq/hq/db"
	"github.com/meshhq/hq/internal/teststore"
)

func setup(t *testing.T) *Client {
	t.Helper()
	store := teststore.Open(t, db.Options{})
	s := &api.Server{Store: store, AdminToken: "admin", Instance: "test", Log: slog.New(slog.NewTextHandler(io.Discard, nil)), MaxWait: time.Second}
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(srv.Close)
	return New(srv.URL+"/", "admin")
}

func TestClientSpeaksTheAPI(t *testing.T) {
	c := setup(t)
	ctx := context.Background()
	reg, err := c.Register(ctx, "web-1")
	if err != nil || reg.Token == "" || reg.Name != "web-1" {
		t.Fatalf("register: %+v %v", reg, err)
	}
	res, err := c.PutModule(ctx, "app", []hq.Resource{{Name: "conf", Kind: hq.KindFile, Path: "/etc/app.conf", Content: "x"}})
	if err != nil || res.Revision != 1 || !res.Created {
		t.Fatalf("put module: %+v %v", res, err)
	}
	gen, err := c.Assign(ctx, "web-1", "app", false)
	if err != nil || gen != 1 {
		t.Fatalf("assign: %d %v", gen, err)
	}
	if gen, err = c.Take(ctx, "web-1", "app"); err != nil || gen != 2 {
		t.Fatalf("take: %d %v", gen, err)
	}
	n, err := c.Node(ctx, "web-1")
	if err != nil || n.Generation != 2 || len(n.Assignments) != 1 || !n.Assignments[0].Taken {
		t.Fatalf("node: %+v %v", n, err)
	}
	l, err := c.AllNodes(ctx, NodeQuery{Status: "new"})
	if err != nil || len(l.Nodes) != 1 || l.Total != 1 {
		t.Fatalf("nodes: %+v %v", l, err)
	}
	st, err := c.Status(ctx)
	if err != nil || st.Nodes["total"] != 1 {
		t.Fatalf("status: %+v %v", st, err)
	}
	if sends, err := c.Sends(ctx, "web-1", 10); err != nil || len(sends) != 0 {
		t.Fatalf("sends: %+v %v", sends, err)
	}
}

func TestClientErrorsCarryStatusAndCode(t *testing.T) {
	c := setup(t)
	_, err := c.Node(context.Background(), "nobody")
	ce, ok := errors.AsType[*Error](err)
	if !ok || ce.Status != 404 || StatusOf(err) != 404 || ce.API.Code != hq.CodeNotFound || ce.API.Message == "" {
		t.Fatalf("err = %v, want a 404 *Error with code not_found and a message", err)
	}
	c.Token = "wrong"
	if _, err := c.Status(context.Background()); StatusOf(err) != 401 {
		t.Fatalf("a wrong token: %v, want 401", err)
	}
}
