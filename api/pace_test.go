package api

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/meshhq/hq/db"
	"github.com/meshhq/hq/internal/wait"
)

// goRoom waits for room on a goroutine of its own; the channel closes when it may go.
func goRoom(a *admission, ctx context.Context, until time.Time) chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		a.room(ctx, until)
	}()
	return done
}

func isDone(ch chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

func waitQueued(t *testing.T, a *admission, n int32) {
	t.Helper()
	wait.For(t, 5*time.Second, "declarations waiting", func() bool { return a.pace.queued.Load() == n })
}

// A new declaration goes while the reports in flight fill less than half of the slots, and
// waits while they fill half, until one leaves. In a bubble of synctest, so that "it waits" is
// proven rather than sampled: synctest.Wait returns only once the waiter is durably blocked, and
// the bubble's clock runs the waiter through many of its rechecks in no time.
func TestADeclarationWaitsForRoomAmongTheReports(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		a := newAdmission(4)
		far := time.Now().Add(time.Minute)
		a.take(100)
		a.room(t.Context(), far) // one of four in flight: it goes at once
		if a.pace.held.Load() != 0 {
			t.Fatalf("held %d with room to spare", a.pace.held.Load())
		}
		a.take(100) // its report: now two of four, half
		done := goRoom(a, t.Context(), far)
		time.Sleep(10 * paceRecheck) // ten rechecks, each finding no room
		synctest.Wait()
		if isDone(done) || a.pace.queued.Load() != 1 {
			t.Fatalf("while half the slots were taken: gone %v, queued %d", isDone(done), a.pace.queued.Load())
		}
		a.release(100)
		<-done // a deadlock here fails the test: the waiter was never let go
		if a.pace.held.Load() != 1 || a.pace.queued.Load() != 0 {
			t.Fatalf("held %d, queued %d; want 1, 0", a.pace.held.Load(), a.pace.queued.Load())
		}
	})
}

// The declarations whose polls end soonest go first, and the report each one promises is
// waited for before the next goes.
func TestTheSoonestEndingDeclarationGoesFirst(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		a := newAdmission(2)
		a.take(100) // half of two
		now := time.Now()
		late := goRoom(a, t.Context(), now.Add(time.Minute))
		synctest.Wait()
		soon := goRoom(a, t.Context(), now.Add(30*time.Second))
		synctest.Wait()
		if q := a.pace.queued.Load(); q != 2 {
			t.Fatalf("%d queued, want 2", q)
		}
		a.release(100)
		<-soon
		time.Sleep(promiseTTL / 2) // within the first one's promise
		synctest.Wait()
		if isDone(late) {
			t.Fatal("the later declaration went before the first one's report came")
		}
		// The first declaration's report comes in and is taken.
		a.take(100)
		a.release(100)
		<-late
	})
}

// A declaration whose report does not come holds the room back only for a moment: a host may
// take minutes to apply.
func TestAPromiseLapses(t *testing.T) {
	t.Parallel()
	a := newAdmission(2)
	a.room(t.Context(), time.Now().Add(time.Minute)) // promises a report that never comes
	done := goRoom(a, t.Context(), time.Now().Add(time.Minute))
	select {
	case <-done:
	case <-time.After(promiseTTL + 2*paceRecheck + 5*time.Second):
		t.Fatal("a declaration waited on for a report that never came")
	}
}

// No declaration waits past its poll's end, and one whose host went away stops waiting.
func TestADeclarationWaitsNoLongerThanItsPoll(t *testing.T) {
	t.Parallel()
	a := newAdmission(2)
	a.take(100)
	a.room(t.Context(), time.Now().Add(-time.Second)) // past its end: at once
	done := goRoom(a, t.Context(), time.Now().Add(200*time.Millisecond))
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("a declaration waited past its end")
	}
	ctx, cancel := context.WithCancel(t.Context())
	gone := goRoom(a, ctx, time.Now().Add(time.Minute))
	waitQueued(t, a, 1)
	cancel()
	select {
	case <-gone:
	case <-time.After(5 * time.Second):
		t.Fatal("a declaration whose host went away still waits")
	}
	if q := a.pace.queued.Load(); q != 0 {
		t.Fatalf("%d still queued", q)
	}
}

// Through the lot: a parked poll's new declaration is held while the reports in flight fill
// half of HQ_MAX_REPORTS_IN_FLIGHT, and answered when one leaves.
func TestAParkedPollsDeclarationWaitsForTheReportsInFlight(t *testing.T) {
	t.Parallel()
	f := setupWith(t, false, db.Options{}, func(s *Server) { s.MaxReportsInFlight = 2 })
	f.want(f.do("PUT", "/api/v1/modules/app", admin, appModule), 201)
	tok := f.node("web-1")
	other := f.node("web-2")
	slow := &blockingBody{release: make(chan struct{})}
	reported := make(chan int, 1)
	go func() {
		req := httptest.NewRequest("POST", "/api/v1/nodes/web-2/reports", slow)
		req.Header.Set("Authorization", "Bearer "+other)
		w := httptest.NewRecorder()
		f.handler.ServeHTTP(w, req)
		reported <- w.Code
	}()
	wait.For(t, 5*time.Second, "the report's body to be read", slow.read.Load)
	c, r := f.rawPoll("web-1", tok, "after=0&wait=5s")
	f.waitParked(1)
	f.want(f.do("PUT", "/api/v1/nodes/web-1/assignments/app", admin, nil), 200)
	waitQueued(t, f.server.reports, 1)
	var answered atomic.Bool
	got := make(chan *http.Response, 1)
	go func() {
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		resp, err := http.ReadResponse(r, nil)
		answered.Store(true)
		if err != nil {
			t.Error(err)
		}
		got <- resp
	}()
	// Queued is waiting in room(), which the answer comes after: no sleep needed to see that
	// it was not answered (the unit tests above prove the waiting itself).
	if answered.Load() || f.server.reports.pace.queued.Load() != 1 {
		t.Fatal("the declaration was answered while half the report slots were taken")
	}
	close(slow.release)
	<-reported
	resp := <-got
	if resp == nil || resp.StatusCode != http.StatusOK || resp.Header.Get("ETag") != `"1"` {
		t.Fatalf("the held poll: %v", resp)
	}
	resp.Body.Close()
	if n := f.server.Held(); n != 1 {
		t.Fatalf("Held() = %d, want 1", n)
	}
}

// HQ_PACING=false answers at once.
func TestWithoutPacingADeclarationGoesAtOnce(t *testing.T) {
	t.Parallel()
	f := setupWith(t, false, db.Options{}, func(s *Server) { s.MaxReportsInFlight = 2; s.NoPacing = true })
	f.want(f.do("PUT", "/api/v1/modules/app", admin, appModule), 201)
	tok := f.node("web-1")
	f.server.reports.take(100)
	defer f.server.reports.release(100)
	c, r := f.rawPoll("web-1", tok, "after=0&wait=5s")
	f.waitParked(1)
	f.want(f.do("PUT", "/api/v1/nodes/web-1/assignments/app", admin, nil), 200)
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	resp, err := http.ReadResponse(r, nil)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("poll: %v %v", resp, err)
	}
	resp.Body.Close()
	if n := f.server.Held(); n != 0 {
		t.Fatalf("Held() = %d, want 0", n)
	}
}
