package hostd

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"time"

	"github.com/meshhq/hq/client/node"
)

// maxRetryAfter caps how long a Retry-After can make hostd wait.
const maxRetryAfter = node.MaxRetryAfter

// retrier spaces out the attempts of one call to the controller that keeps failing: each
// wait doubles, from first up to max, and a success starts over from first. A controller that
// says how long to wait (Retry-After) is obeyed instead.
type retrier struct {
	first, max, next time.Duration
}

func newRetrier(first, max time.Duration) *retrier {
	return &retrier{first: first, max: max, next: first}
}

// delay is how long the next wait lasts when the controller asks for nothing longer.
func (r *retrier) delay() time.Duration { return r.next }

// wait sleeps before the next attempt and reports false when ctx ends first. With asked (a
// Retry-After) it waits that long and a little more, so hosts told the same come back spread
// out; otherwise it waits the next back-off.
func (r *retrier) wait(ctx context.Context, asked time.Duration) bool {
	d := r.next
	if asked > 0 {
		d = min(asked, maxRetryAfter) + jitter(asked)
	} else {
		r.next = min(r.next*2, r.max)
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// backOff logs a call that failed with err (as msg; when the controller is overloaded, once for
// the episode through busy; when TLS failed, not here) and waits before the next attempt: as
// long as the controller asked, or the next back-off. It reports false when ctx ends first.
func (r *retrier) backOff(ctx context.Context, log *slog.Logger, busy *overload, msg string, err error) bool {
	asked, overloaded := node.Overloaded(err)
	switch {
	case overloaded:
		busy.seen(log, err, asked)
	case tlsTrouble(err) != "":
		// The client's tlsWatch logs each cause once, not at every retry.
	default:
		log.Warn(msg, "err", err, "retry_in", r.delay())
	}
	return r.wait(ctx, asked)
}

// reset makes the next wait the first one again, after a success.
func (r *retrier) reset() { r.next = r.first }

// jitter is a random part of a tenth of d and 100ms.
func jitter(d time.Duration) time.Duration {
	return rand.N(min(d, maxRetryAfter)/10 + 100*time.Millisecond)
}

// overload logs a controller's overload once per episode: when it begins and when it ends,
// not at every retry in between.
type overload struct {
	// what is the call that waits, for the log.
	what    string
	since   time.Time
	retries int
}

// seen notes an answer that says the controller is overloaded.
func (o *overload) seen(log *slog.Logger, err error, asked time.Duration) {
	o.retries++
	if !o.since.IsZero() {
		return
	}
	o.since = time.Now()
	log.Warn("controller overloaded: "+o.what+" waits as it asks before trying again", "err", err, "retry_after", asked)
}

// over notes a call that worked, which ends an episode.
func (o *overload) over(log *slog.Logger) {
	if o.since.IsZero() {
		return
	}
	log.Info("controller no longer overloaded: "+o.what+" went through", "after", time.Since(o.since).Round(time.Millisecond), "retries", o.retries)
	o.since, o.retries = time.Time{}, 0
}
