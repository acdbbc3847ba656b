package api

import (
	"net/http"
	"sync/atomic"

	"github.com/meshhq/hq"
)

// admission bounds the reports being taken in at once, by count and by the bytes their bodies
// may hold. Past either bound a report is turned away with 503 and a jittered Retry-After
// before its body is read, so a burst of hosts costs the controller a few bytes each rather
// than its memory; hostd comes back when it is told. The count is generous, since most of a
// report's time in flight is waiting for a core or for the one writer, not holding memory; the
// bytes are what bound memory.
type admission struct {
	slots chan struct{}
	// bytes is what the admitted bodies may hold, at most maxBytes.
	bytes, maxBytes atomic.Int64
	// shed counts the reports turned away.
	shed atomic.Int64
}

// MaxReportBytesInFlight bounds the bodies of the reports taken in at once: 256 steady
// 500-result reports, or eight of the largest a host may send.
const MaxReportBytesInFlight = 64 << 20

func newAdmission(n int) *admission {
	a := &admission{slots: make(chan struct{}, max(n, 1))}
	a.maxBytes.Store(MaxReportBytesInFlight)
	return a
}

// take admits a report whose body is size bytes (-1 when it does not say: counted as the most
// a body may be).
func (a *admission) take(size int64) bool {
	if size < 0 || size > maxBody {
		size = maxBody
	}
	select {
	case a.slots <- struct{}{}:
	default:
		return false
	}
	if a.bytes.Add(size) > a.maxBytes.Load() {
		a.release(size)
		return false
	}
	return true
}

func (a *admission) release(size int64) {
	if size < 0 || size > maxBody {
		size = maxBody
	}
	a.bytes.Add(-size)
	<-a.slots
}

// Shed is how many reports were turned away since the controller started.
func (s *Server) Shed() int64 {
	if s.reports == nil {
		return 0
	}
	return s.reports.shed.Load()
}

// admitReports lets a report in when the bounds allow, and turns it away at once otherwise.
func (s *Server) admitReports(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.reports.take(r.ContentLength) {
			defer s.reports.release(r.ContentLength)
			next.ServeHTTP(w, r)
			return
		}
		s.reports.shed.Add(1)
		// The connection stays open: net/http drains an unread body of up to 256 KB (a steady
		// report is tens of KB) into a small buffer of its own, and closes the connection past
		// that. A host sent away would otherwise come back on a new connection, and a burst of
		// new connections, each with its goroutine and buffers, is what overload fills memory with.
		s.writeError(w, r, hq.Errorf(hq.CodeUnavailable, "the controller is taking in as many reports as it can; try again after Retry-After seconds"))
	})
}
