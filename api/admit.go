package api

import (
	"io"
	"net/http"
	"sync/atomic"
	"time"

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
	// pace holds new declarations back while the slots are half taken (pace.go).
	pace pacer
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
	a.arrived()
	return true
}

func (a *admission) release(size int64) {
	if size < 0 || size > maxBody {
		size = maxBody
	}
	a.bytes.Add(-size)
	<-a.slots
	a.left()
}

// Shed is how many reports were turned away since the controller started.
func (s *Server) Shed() int64 {
	if s.reports == nil {
		return 0
	}
	return s.reports.shed.Load()
}

// admitReports lets a report in when the bounds allow, and turns it away at once otherwise: a
// body larger than a report may be with 413, from its Content-Length, and one past the bounds
// with 503. An admitted report's answer is written in full duplex: one refused before its body
// is read (a token refused, a node past its own bounds) is answered at once, and leaves its
// slot, rather than waiting for a body its client may send slowly or never.
func (s *Server) admitReports(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength > maxBody {
			s.turnAway(w, r, hq.Errorf(hq.CodeTooLarge, "request body is larger than %d bytes", maxBody))
			return
		}
		if s.reports.take(r.ContentLength) {
			defer s.reports.release(r.ContentLength)
			fullDuplex(w)
			next.ServeHTTP(w, r)
			return
		}
		s.reports.shed.Add(1)
		s.shed(w, r)
	})
}

// fullDuplex lets w's answer be written before the request's body is read, as
// http.ResponseController does, without allocating one.
func fullDuplex(w http.ResponseWriter) {
	for range 8 {
		switch v := w.(type) {
		case interface{ EnableFullDuplex() error }:
			v.EnableFullDuplex()
			return
		case interface{ Unwrap() http.ResponseWriter }:
			w = v.Unwrap()
		default:
			return
		}
	}
}

// maxShedDrain is what a turned-away report's body may be for its connection to be kept, as
// net/http keeps one whose unread body is at most this.
const maxShedDrain = 256 << 10

// shedDrainTimeout bounds the wait for a turned-away report's body once it has its answer.
const shedDrainTimeout = 5 * time.Second

// shed answers a report 503 before reading its body (turnAway), then reads and discards the body so the
// connection can carry the host's next report. By default net/http reads an unread body before
// it writes the answer, so a client that stalls its body would wait for nothing; in full
// duplex the answer goes out first. The connection is kept because a host sent away would
// otherwise come back on a new connection, and a burst of new connections, each with its
// goroutine, buffers and handshake, is what overload fills memory with. A body too large, too
// slow, or awaiting a 100 Continue closes it instead, so nothing of it is read as a request.
func (s *Server) shed(w http.ResponseWriter, r *http.Request) {
	s.turnAway(w, r, hq.Errorf(hq.CodeUnavailable, "the controller is taking in as many reports as it can; try again after Retry-After seconds"))
}

// turnAway answers a report err before reading its body, as shed does.
func (s *Server) turnAway(w http.ResponseWriter, r *http.Request, err error) {
	rc := http.NewResponseController(w)
	duplex := rc.EnableFullDuplex() == nil
	s.writeError(w, r, err)
	if !duplex || r.ProtoMajor != 1 {
		return
	}
	rc.Flush()
	// A body said to be larger than is kept is not waited for.
	if len(r.Header.Values("Expect")) == 0 && r.ContentLength <= maxShedDrain {
		rc.SetReadDeadline(time.Now().Add(shedDrainTimeout))
		n, err := io.CopyN(io.Discard, r.Body, maxShedDrain+1)
		if err == io.EOF && n <= maxShedDrain {
			return
		}
	}
	if conn, _, err := rc.Hijack(); err == nil {
		conn.Close()
	}
}
