package api

import (
	"sync"
	"time"
)

// pollers remembers the hosts whose long-polls were answered at once for MaxPolls: they poll
// on their interval instead of holding a connection. A host counts as polling until it holds a
// poll again, or until it has not polled for twice the wait it was asked to keep (gone, or
// moved to another controller).
type pollers struct {
	mu   sync.Mutex
	last map[string]time.Time
}

// deferred records that node's poll was answered at once.
func (p *pollers) deferred(node string, now time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.last == nil {
		p.last = map[string]time.Time{}
	}
	p.last[node] = now
}

// holds records that node's poll waits: it no longer polls.
func (p *pollers) holds(node string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.last, node) // a no-op, and no allocation, for the many hosts that never polled
}

// count is how many hosts poll now, forgetting those not heard from since before.
func (p *pollers) count(before time.Time) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	for node, at := range p.last {
		if at.Before(before) {
			delete(p.last, node)
		}
	}
	return len(p.last)
}

// Polling is how many hosts poll on their interval because MaxPolls long-polls waited already
// when they last asked.
func (s *Server) Polling() int {
	return s.polling.count(time.Now().Add(-2 * deferredPollRetry))
}
