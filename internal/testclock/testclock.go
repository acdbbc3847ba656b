// Package testclock is a settable time for tests: a store, pages or a story told on a clock
// the test moves.
package testclock

import (
	"sync"
	"time"
)

// Clock is a time that moves only when told to; safe for concurrent use.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// At is a clock standing at t.
func At(t time.Time) *Clock { return &Clock{t: t} }

// Now is the clock's time; a store takes it as its Options.Now.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Advance moves the clock on by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// Set puts the clock at t.
func (c *Clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t
}
