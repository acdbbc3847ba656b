package hostd

import (
	"context"
	"time"
)

// retrier spaces out the attempts of one call to the controller that keeps failing: each
// wait doubles, from first up to max, and a success starts over from first.
type retrier struct {
	first, max, next time.Duration
}

func newRetrier(first, max time.Duration) *retrier {
	return &retrier{first: first, max: max, next: first}
}

// delay is how long the next wait lasts when the controller asks for nothing longer.
func (r *retrier) delay() time.Duration { return r.next }

// wait sleeps before the next attempt, and reports false when ctx ends first.
func (r *retrier) wait(ctx context.Context) bool {
	d := r.next
	r.next = min(r.next*2, r.max)
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// reset makes the next wait the first one again, after a success.
func (r *retrier) reset() { r.next = r.first }
