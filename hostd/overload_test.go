package hostd

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/meshhq/hq"
)

// wantSpacedAsAsked checks that every retry after an overloaded answer came at least the two
// seconds the controller asked for (Retry-After: 2) after it.
func (f *fakeController) wantSpacedAsAsked(call string, shed int) {
	f.t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	tries := f.tries[call]
	if len(tries) < shed+1 {
		f.t.Fatalf("%d %s calls, want at least %d", len(tries), call, shed+1)
	}
	for i := 1; i <= shed; i++ {
		if gap := tries[i].Sub(tries[i-1]); gap < 2*time.Second {
			f.t.Errorf("%s retried %s after an overloaded answer that asked for 2s", call, gap)
		}
	}
}

func TestReportWaitsAsTheOverloadedControllerAsks(t *testing.T) {
	t.Parallel()
	f, srv := newFakeController(t)
	f.busy["report"] = []int{http.StatusServiceUnavailable, http.StatusServiceUnavailable}
	logs := &logBuffer{}
	stop := runHostd(t, f.config(srv), logs)
	d := f.publish(1, mod("app", false, file("conf", "/etc/app.conf", "v1")))
	// One reconcile (the interval is an hour): the report posted at last is the one shed twice.
	rep := f.waitReport("the report, once the controller takes it", func(r hq.Report) bool { return true })
	if rep.Generation != 1 || rep.SendID != d.SendID || len(rep.Results) != 1 {
		t.Fatalf("report %+v", rep)
	}
	f.wantSpacedAsAsked("report", 2)
	// The controller has the report before hostd has its answer: the episode's end is logged
	// once hostd reads it.
	waitFor(t, 10*time.Second, "the episode's end to be logged", func() bool {
		return strings.Contains(logs.String(), "controller no longer overloaded: posting the report went through")
	})
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(logs.String(), "controller overloaded: posting the report"); n != 1 {
		t.Fatalf("overload logged %d times, want once for the episode:\n%s", n, logs)
	}
	if !strings.Contains(logs.String(), "503 Service Unavailable: overloaded, come back later") ||
		!strings.Contains(logs.String(), "controller no longer overloaded: posting the report went through") {
		t.Fatalf("the episode is not logged as it went:\n%s", logs)
	}
	if strings.Contains(logs.String(), `msg="posting report"`) {
		t.Fatalf("an overloaded answer is logged as a failure:\n%s", logs)
	}
}

func TestPollWaitsAsTheControllerAsksOnTooManyRequests(t *testing.T) {
	t.Parallel()
	f, srv := newFakeController(t)
	f.busy["poll"] = []int{http.StatusTooManyRequests}
	logs := &logBuffer{}
	stop := runHostd(t, f.config(srv), logs)
	f.publish(1, mod("app", false, file("conf", "/etc/app.conf", "v1")))
	f.waitReport("the report of generation 1", func(r hq.Report) bool { return r.Generation == 1 })
	f.wantSpacedAsAsked("poll", 1)
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(logs.String(), "controller overloaded: fetching the declaration"); n != 1 {
		t.Fatalf("overload logged %d times, want once for the episode:\n%s", n, logs)
	}
}

func TestRetrierWaitsAtLeastWhatIsAsked(t *testing.T) {
	r := newRetrier(time.Millisecond, time.Second)
	began := time.Now()
	if !r.wait(t.Context(), 300*time.Millisecond) {
		t.Fatal("wait ended early")
	}
	if took := time.Since(began); took < 300*time.Millisecond || took > 2*time.Second {
		t.Fatalf("waited %s for a Retry-After of 300ms", took)
	}
	if r.delay() != time.Millisecond {
		t.Fatalf("a wait the controller asked for moved the back-off on to %s", r.delay())
	}
}
