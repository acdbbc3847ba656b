package api

import (
	"container/heap"
	"context"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"
)

// A new revision wakes every host's long-poll at once, and each host applies and reports
// within moments: a wave larger than the reports the controller takes in at once would be
// turned away with 503 and come back seconds later. So a long-poll's new declaration waits
// while the reports in flight fill half of their slots, and the hosts are answered as fast as
// their reports are taken in. The polls that end soonest go first, and none waits more than
// paceGrace past its wait.

// paceGrace is how long past its wait a poll's new declaration may be held: hostd gives a
// poll its wait and 30 s before it gives up on it.
const paceGrace = 15 * time.Second

// promiseTTL is how long a declaration let go counts against the room, unless a report comes
// in first: a report follows its declaration within moments from a host with little to do,
// and may take minutes from one with much to do, which is not waited for.
const promiseTTL = 250 * time.Millisecond

// paceRecheck is how often a waiting declaration looks for room again when no report has
// left meanwhile (the reports of those let go may be slow to come, or never come).
const paceRecheck = time.Second

// pacer holds the declarations waiting for room among the reports in flight.
type pacer struct {
	mu      sync.Mutex
	waiting waiters
	queued  atomic.Int32 // len(waiting), read without the lock by every report that leaves
	// promised counts the declarations let go since lastGo (unix ns) whose reports have not
	// come in.
	promised, lastGo atomic.Int64
	held             atomic.Int64 // declarations that waited
}

// room waits until a new declaration may go: the reports in flight, and those promised by
// the declarations just let go, fill less than half of the slots. It waits at most until
// until, or until ctx ends.
func (a *admission) room(ctx context.Context, until time.Time) {
	p := &a.pace
	now := time.Now()
	p.mu.Lock()
	if (len(p.waiting) == 0 && a.fits(now)) || !now.Before(until) {
		p.promise(now)
		p.mu.Unlock()
		return
	}
	w := &waiter{until: until, ready: make(chan struct{})}
	heap.Push(&p.waiting, w)
	p.queued.Store(int32(len(p.waiting)))
	p.mu.Unlock()
	p.held.Add(1)
	// The first look is jittered, so a wave's waiters do not all look at once.
	t := time.NewTimer(min(paceRecheck/2+rand.N(paceRecheck), time.Until(until)))
	defer t.Stop()
	for {
		select {
		case <-w.ready:
			return
		case <-ctx.Done():
			p.mu.Lock()
			p.remove(w)
			p.mu.Unlock()
			return
		case now := <-t.C:
			p.mu.Lock()
			a.letGo(now)
			if !now.Before(until) && p.remove(w) {
				p.promise(now)
			}
			gone := w.index < 0
			p.mu.Unlock()
			if gone {
				return
			}
			t.Reset(min(paceRecheck, time.Until(until)))
		}
	}
}

// fits reports whether there is room for one more declaration.
func (a *admission) fits(now time.Time) bool {
	load := len(a.slots)
	if now.UnixNano()-a.pace.lastGo.Load() < int64(promiseTTL) {
		load += int(a.pace.promised.Load())
	}
	return load < max(cap(a.slots)/2, 1)
}

// letGo lets the waiting declarations go, soonest ending first, while there is room. p.mu is
// held.
func (a *admission) letGo(now time.Time) {
	p := &a.pace
	for len(p.waiting) > 0 && a.fits(now) {
		w := heap.Pop(&p.waiting).(*waiter)
		close(w.ready)
		p.promise(now)
	}
	p.queued.Store(int32(len(p.waiting)))
}

// left is told of every report that leaves its slot: a waiting declaration may go.
func (a *admission) left() {
	if a.pace.queued.Load() == 0 {
		return
	}
	a.pace.mu.Lock()
	a.letGo(time.Now())
	a.pace.mu.Unlock()
}

// arrived is told of every report admitted: it may be one that a declaration promised.
func (a *admission) arrived() {
	for {
		n := a.pace.promised.Load()
		if n <= 0 || a.pace.promised.CompareAndSwap(n, n-1) {
			return
		}
	}
}

// promise counts a declaration let go. p.mu is held.
func (p *pacer) promise(now time.Time) {
	if now.UnixNano()-p.lastGo.Load() >= int64(promiseTTL) {
		p.promised.Store(0)
	}
	p.promised.Add(1)
	p.lastGo.Store(now.UnixNano())
}

// remove takes w out of the waiting, and reports whether it was still there (not let go).
// p.mu is held.
func (p *pacer) remove(w *waiter) bool {
	if w.index < 0 {
		return false
	}
	heap.Remove(&p.waiting, w.index)
	p.queued.Store(int32(len(p.waiting)))
	return true
}

// waiter is one declaration waiting for room.
type waiter struct {
	until time.Time
	ready chan struct{} // closed when it is let go
	index int           // in waiters; -1 once out
}

// waiters is a heap of the waiting declarations, the soonest to end on top.
type waiters []*waiter

func (h waiters) Len() int           { return len(h) }
func (h waiters) Less(i, j int) bool { return h[i].until.Before(h[j].until) }
func (h waiters) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index, h[j].index = i, j
}
func (h *waiters) Push(x any) {
	w := x.(*waiter)
	w.index = len(*h)
	*h = append(*h, w)
}
func (h *waiters) Pop() any {
	old := *h
	w := old[len(old)-1]
	old[len(old)-1] = nil
	w.index = -1
	*h = old[:len(old)-1]
	return w
}

// Held is how many new declarations waited for room among the reports in flight.
func (s *Server) Held() int64 {
	if s.reports == nil {
		return 0
	}
	return s.reports.pace.held.Load()
}

// paced waits, for a long-poll that came at start and may wait wait, until its new
// declaration may go (room).
func (s *Server) paced(ctx context.Context, start time.Time, wait time.Duration) {
	if s.NoPacing || s.reports == nil {
		return
	}
	s.reports.room(ctx, start.Add(wait+paceGrace))
}
