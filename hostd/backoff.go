package hostd

import (
	"path/filepath"
	"time"

	"github.com/meshhq/hq"
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
	// Spec is the digest of the spec that failed: a new declaration that changes it resets
	// the count.
	Spec string `json:"spec,omitempty"`
	// Stuck is set when the controller declared the resource stuck while this run of failures
	// lasted. A group with a stuck member is not attempted again (each attempt takes its old
	// state down and puts it back) until its spec changes or an operator retries it: both
	// forget the failure, and with it the mark.
	Stuck bool `json:"stuck,omitempty"`
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

// stuck marks the failures of refs as stuck; a ref with no failure (it was retried, or it
// applied since) is left alone. It returns the refs it newly marked.
func (b *backoff) stuck(refs []string) []string {
	var marked []string
	for _, ref := range refs {
		if f := b.fails[ref]; f != nil && !f.Stuck {
			f.Stuck = true
			b.dirty = true
			marked = append(marked, ref)
		}
	}
	return marked
}

func (b *backoff) failed(ref string, at time.Time, err, spec string) {
	f := b.fails[ref]
	if f == nil {
		f = &failure{}
		b.fails[ref] = f
	}
	f.N++
	f.Last = at
	f.Err = err
	f.Spec = spec
	b.dirty = true
}

// declared forgets the failures of the resources d no longer declares or declares with
// another spec: a new revision that changes a resource deserves a fresh attempt at once, while
// one that does not change it leaves its back-off as it was.
func (b *backoff) declared(d *hq.Declaration) {
	if len(b.fails) == 0 {
		return
	}
	keep := make(map[string]bool, len(b.fails))
	for _, m := range d.Modules {
		for _, r := range m.Resources {
			ref := hq.Ref(m.Name, r.Name)
			if f := b.fails[ref]; f != nil && f.Spec == r.Digest() {
				keep[ref] = true
			}
		}
	}
	for ref := range b.fails {
		if !keep[ref] {
			delete(b.fails, ref)
			b.dirty = true
		}
	}
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
