package api

import (
	"net/http"
	"sync/atomic"

	"github.com/meshhq/hq"
)

// admission bounds the reports being taken in at once. Past the bound a report is turned away
// with 503 and a jittered Retry-After before its body is read, so a burst of hosts costs the
// controller a few bytes each rather than its memory; hostd comes back when it is told.
type admission struct {
	slots chan struct{}
	// shed counts the reports turned away.
	shed atomic.Int64
}

func newAdmission(n int) *admission {
	if n < 1 {
		n = 1
	}
	return &admission{slots: make(chan struct{}, n)}
}

// Shed is how many reports were turned away since the controller started.
func (s *Server) Shed() int64 {
	if s.reports == nil {
		return 0
	}
	return s.reports.shed.Load()
}

// admitReports lets a report in when a slot is free, and turns it away at once otherwise.
func (s *Server) admitReports(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case s.reports.slots <- struct{}{}:
			defer func() { <-s.reports.slots }()
			next.ServeHTTP(w, r)
		default:
			s.reports.shed.Add(1)
			w.Header().Set("Connection", "close") // the unread body makes the connection unusable anyway
			s.writeError(w, r, hq.Errorf(hq.CodeUnavailable, "the controller is taking in as many reports as it can; try again after Retry-After seconds"))
		}
	})
}
