package hostd

import (
	"path/filepath"
	"time"
)

const (
	backoffFile = "backoff.json"
	// maxBackoff caps the wait between attempts of a failing resource.
	maxBackoff = time.Hour
)

// failure is a resource's run of consecutive failed attempts.
type failure struct {
	N    int       `json:"n"`
	Last time.Time `json:"last"`
	Err  string    `json:"error"`
}

// backoff spaces out the attempts of failing resources: after n consecutive failures the next
// attempt waits min(interval × 2^(n-1), 1h), so a resource that can never apply does not churn
// the machine every interval, while a transient failure is retried at the next reconcile.
type backoff struct {
	interval time.Duration
	fails    map[string]*failure
	dirty    bool
}

func newBackoff(interval time.Duration) *backoff {
	return &backoff{interval: interval, fails: map[string]*failure{}}
}

// wait is how long after the last attempt the next one is due.
func (b *backoff) wait(n int) time.Duration {
	d := b.interval
	for i := 1; i < n && d < maxBackoff; i++ {
		d *= 2
	}
	return min(d, maxBackoff)
}

// skip reports the failure that makes ref wait, or nil when ref may be attempted at now.
// Reconciles run on a ticker, so a tenth of the interval is forgiven: the attempt one interval
// later must not be skipped for arriving a few milliseconds early.
func (b *backoff) skip(ref string, now time.Time) *failure {
	f := b.fails[ref]
	if f == nil {
		return nil
	}
	if now.Before(f.Last.Add(b.wait(f.N) - b.interval/10)) {
		return f
	}
	return nil
}

func (b *backoff) failed(ref string, at time.Time, err string) {
	f := b.fails[ref]
	if f == nil {
		f = &failure{}
		b.fails[ref] = f
	}
	f.N++
	f.Last = at
	f.Err = err
	b.dirty = true
}

// drop forgets ref's failures; with no refs it forgets every failure.
func (b *backoff) drop(refs ...string) {
	if len(refs) == 0 {
		if len(b.fails) > 0 {
			b.fails = map[string]*failure{}
			b.dirty = true
		}
		return
	}
	for _, ref := range refs {
		if _, ok := b.fails[ref]; ok {
			delete(b.fails, ref)
			b.dirty = true
		}
	}
}

func (b *backoff) load(stateDir string) error {
	_, err := readJSON(filepath.Join(stateDir, backoffFile), &b.fails)
	if b.fails == nil {
		b.fails = map[string]*failure{}
	}
	return err
}

func (b *backoff) save(stateDir string) error {
	if !b.dirty {
		return nil
	}
	if err := writeJSONAtomic(filepath.Join(stateDir, backoffFile), b.fails); err != nil {
		return err
	}
	b.dirty = false
	return nil
}
