package api

import (
	"math"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/meshhq/hq"
)

// DefaultReportsPerNode is how many reports of one node are taken in at once: a host sends one
// at a time, and one more covers a report it gave up on that the controller still reads. Two
// bodies of at most 8 MiB are a quarter of MaxReportBytesInFlight, so one node's slow or large
// bodies leave the rest to the others.
const DefaultReportsPerNode = 2

// nodeReports bounds what one node's reports may take, within the bounds all reports share
// (admission): its reports in flight, and, with a rate, how fast it may report (a token
// bucket). Both are counted after the node's token is checked, so no one but the node itself
// spends them. A node is forgotten once it has nothing in flight and a full bucket.
type nodeReports struct {
	perNode int
	// rate is the reports a second a node's bucket refills with (0: no bound); burst is what it
	// holds.
	rate, burst float64

	mu    sync.Mutex
	nodes map[string]nodeReporting
	// sweepAt is the size of nodes past which the full, idle ones are forgotten.
	sweepAt   int
	throttled atomic.Int64 // reports turned away for the rate
}

// nodeReporting is one node's reports in flight and its bucket: tokens at at (unix ns).
type nodeReporting struct {
	inFlight int
	tokens   float64
	at       int64
}

func newNodeReports(perNode int, rate float64, burst int) *nodeReports {
	return &nodeReports{perNode: max(perNode, 1), rate: max(rate, 0), burst: float64(max(burst, 1)),
		nodes: map[string]nodeReporting{}, sweepAt: minSweep}
}

// minSweep: a fleet this small is never swept.
const minSweep = 1024

type verdict int

const (
	admitted verdict = iota
	nodeBusy         // perNode of its reports in flight already
	tooFast          // its bucket is empty
)

// take admits a report of node at now (unix ns), or says why not, and, when it came too fast,
// how long until its bucket holds one.
func (n *nodeReports) take(node string, now int64) (verdict, time.Duration) {
	n.mu.Lock()
	defer n.mu.Unlock()
	st, known := n.nodes[node]
	if st.inFlight >= n.perNode {
		return nodeBusy, 0
	}
	if n.rate > 0 {
		st.tokens = n.refilled(st, known, now)
		st.at = now
		if st.tokens < 1 {
			n.nodes[node] = st
			return tooFast, time.Duration((1 - st.tokens) / n.rate * float64(time.Second))
		}
		st.tokens--
	}
	st.inFlight++
	n.nodes[node] = st
	if !known && len(n.nodes) > n.sweepAt {
		n.sweep(now)
	}
	return admitted, 0
}

// leave is told of a report of node that leaves.
func (n *nodeReports) leave(node string, now int64) {
	n.mu.Lock()
	defer n.mu.Unlock()
	st := n.nodes[node]
	st.inFlight--
	if st.inFlight <= 0 && (n.rate == 0 || n.refilled(st, true, now) >= n.burst) {
		delete(n.nodes, node)
		return
	}
	n.nodes[node] = st
}

// refilled is what st's bucket holds at now; a node not known has a full one.
func (n *nodeReports) refilled(st nodeReporting, known bool, now int64) float64 {
	if !known {
		return n.burst
	}
	return math.Min(n.burst, st.tokens+float64(now-st.at)/float64(time.Second)*n.rate)
}

// sweep forgets the nodes with nothing in flight and a full bucket: the map holds the nodes
// that reported within the last burst/rate seconds, not every node that ever did. n.mu is held.
func (n *nodeReports) sweep(now int64) {
	for node, st := range n.nodes {
		if st.inFlight <= 0 && n.refilled(st, true, now) >= n.burst {
			delete(n.nodes, node)
		}
	}
	n.sweepAt = max(2*len(n.nodes), minSweep)
}

// boundNode holds a node's report to the node's own bounds (nodeReports): past its reports in
// flight it is answered 503 as past the shared bounds, and past its rate 429 with Retry-After,
// before its body is read, storing nothing. The operator's reports are not bounded.
func (s *Server) boundNode(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, _ := r.Context().Value(callerKey).(caller)
		if c.operator {
			next.ServeHTTP(w, r)
			return
		}
		switch v, after := s.nodeReports.take(c.node, time.Now().UnixNano()); v {
		case nodeBusy:
			s.reports.shed.Add(1)
			s.shed(w, r)
			return
		case tooFast:
			s.nodeReports.throttled.Add(1)
			w.Header().Set("Retry-After", strconv.Itoa(max(int(math.Ceil(after.Seconds())), 1)))
			s.turnAway(w, r, hq.Errorf(hq.CodeTooManyRequests, "node %s reports faster than %g a second; try again after Retry-After seconds", c.node, s.nodeReports.rate))
			return
		}
		defer func() { s.nodeReports.leave(c.node, time.Now().UnixNano()) }()
		next.ServeHTTP(w, r)
	})
}

// Throttled is how many reports were turned away because their node reported faster than
// NodeReportRate.
func (s *Server) Throttled() int64 {
	if s.nodeReports == nil {
		return 0
	}
	return s.nodeReports.throttled.Load()
}
