package db

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/db/driver"
)

func containerStatuses(t *testing.T, s *Store, node string) []driver.ContainerStatus {
	t.Helper()
	var cs []driver.ContainerStatus
	err := s.inReadTx(context.Background(), func(q driver.Queries) error {
		var err error
		cs, err = q.ContainerStatusListByNode(context.Background(), node)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// A container's status is stored from the report that says it and shown on the node; a report
// that says the same again takes the steady path and writes nothing; one that says something
// new is written. A status on a resource that is not a container is not kept, and a resource no
// longer declared takes its status with it.
func TestContainerStatusIsStoredWhenItChanges(t *testing.T) {
	t.Parallel()
	s, c := setup(t)
	ctx := context.Background()
	mustNode(t, s, "web-1")
	web := hq.Resource{Name: "web", Kind: hq.KindContainer, Image: "localhost/app@sha256:" + "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"}
	mustModule(t, s, "app", web, file("conf", "x"))
	mustAssign(t, s, "web-1", "app")
	d := mustCompose(t, s, "web-1", "test")
	status := hq.ContainerStatus{ID: "4f1c", ImageDigest: "sha256:ab", StartedAt: time.Date(2026, 11, 30, 2, 59, 0, 0, time.UTC),
		Health: hq.HealthHealthy, Spec: web.Digest()}
	results := func(st hq.ContainerStatus) []hq.Result {
		rs := applied("app", "web", "conf")
		rs[0].Container = &st
		rs[1].Container = &hq.ContainerStatus{ID: "not-a-container", Health: hq.HealthNone}
		return rs
	}
	first := ingest(t, s, "web-1", d, results(status)...)
	if got := resource(t, s, "web-1", "app", "web").Container; got == nil || !reflect.DeepEqual(*got, status) {
		t.Fatalf("stored %+v, reported %+v", got, status)
	}
	if got := resource(t, s, "web-1", "app", "conf").Container; got != nil {
		t.Fatalf("a file has a container status: %+v", got)
	}
	since := containerStatuses(t, s, "web-1")[0].Since

	quick := s.steadyHere.Load() + s.steadyTaken.Load()
	c.Advance(time.Minute)
	if again := ingest(t, s, "web-1", d, results(status)...); again.ReportID != first.ReportID {
		t.Fatalf("the same report made row %d, want a repeat of %d", again.ReportID, first.ReportID)
	}
	if got := s.steadyHere.Load() + s.steadyTaken.Load(); got != quick+1 {
		t.Fatalf("a repeated report with a container status was not taken as steady (%d, was %d)", got, quick)
	}
	if cs := containerStatuses(t, s, "web-1"); len(cs) != 1 || cs[0].Since != since {
		t.Fatalf("after a steady report: %+v, want one row written at %s", cs, since)
	}

	c.Advance(time.Minute)
	restarted := status
	restarted.Restarts, restarted.StartedAt, restarted.Health = 1, c.Now(), hq.HealthUnhealthy
	if next := ingest(t, s, "web-1", d, results(restarted)...); next.ReportID == first.ReportID {
		t.Fatal("a report whose container restarted was taken as a repeat")
	}
	if got := resource(t, s, "web-1", "app", "web").Container; got == nil || !reflect.DeepEqual(*got, restarted) {
		t.Fatalf("after a restart: %+v, want %+v", got, restarted)
	}
	if cs := containerStatuses(t, s, "web-1"); len(cs) != 1 || cs[0].Since != hq.FormatTime(c.Now()) {
		t.Fatalf("after a restart: %+v, want written at %s", cs, c.Now())
	}

	if _, err := s.Unassign(ctx, "web-1", "app", nil); err != nil {
		t.Fatal(err)
	}
	if cs := containerStatuses(t, s, "web-1"); len(cs) != 0 {
		t.Fatalf("unassigned, the node still has container statuses: %+v", cs)
	}
}
