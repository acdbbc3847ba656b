// Package guesses bounds the wrong tokens one source address may try: the API's bearer tokens
// and the pages' sign-in. Each address has a bucket of failures that refills at a steady rate;
// once it is empty, the address is answered 429 before its token is even looked at, so a
// token cannot be guessed faster than the rate however fast the guesses come. A right token
// costs nothing: only failures are counted.
package guesses

import (
	"math"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// Limiter counts failures by source address. Its memory is bounded: it remembers at most max
// addresses, forgetting first those whose bucket has refilled, then any.
type Limiter struct {
	rate, burst float64 // failures a second refilled, and held
	max         int
	mu          sync.Mutex
	addrs       map[string]bucket
	n           atomic.Int32 // len(addrs): the many requests of an empty limiter take no lock
	refused     atomic.Int64
}

type bucket struct {
	tokens float64
	at     int64 // unix ns
}

// MaxAddrs is how many addresses a Limiter remembers: a few megabytes at most.
const MaxAddrs = 65536

// New returns a limiter letting an address fail perMinute times a minute, and as many at once;
// nil, which limits nothing, when perMinute is 0.
func New(perMinute int) *Limiter {
	if perMinute <= 0 {
		return nil
	}
	return &Limiter{rate: float64(perMinute) / 60, burst: float64(perMinute), max: MaxAddrs, addrs: map[string]bucket{}}
}

// Source is the address a request came from, without its port.
func Source(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// Blocked reports whether addr has no failure left, and then how long until it has one.
func (l *Limiter) Blocked(addr string) (bool, time.Duration) {
	if l == nil || l.n.Load() == 0 {
		return false, 0
	}
	now := time.Now().UnixNano()
	l.mu.Lock()
	defer l.mu.Unlock()
	b, ok := l.addrs[addr]
	if !ok {
		return false, 0
	}
	if t := l.refilled(b, now); t < 1 {
		l.refused.Add(1)
		return true, time.Duration((1 - t) / l.rate * float64(time.Second))
	}
	return false, 0
}

// Failed counts a failure from addr.
func (l *Limiter) Failed(addr string) {
	if l == nil {
		return
	}
	now := time.Now().UnixNano()
	l.mu.Lock()
	defer l.mu.Unlock()
	b, ok := l.addrs[addr]
	if !ok {
		if len(l.addrs) >= l.max {
			l.forget(now)
		}
		b = bucket{tokens: l.burst, at: now}
	}
	b.tokens = l.refilled(b, now) - 1
	b.at = now
	l.addrs[addr] = b
	l.n.Store(int32(len(l.addrs)))
}

// Refused is how many requests were answered 429 since the limiter was made.
func (l *Limiter) Refused() int64 {
	if l == nil {
		return 0
	}
	return l.refused.Load()
}

// refilled is what b holds at now.
func (l *Limiter) refilled(b bucket, now int64) float64 {
	return math.Min(l.burst, b.tokens+float64(now-b.at)/float64(time.Second)*l.rate)
}

// forget makes room for one more address: those whose bucket refilled go, and if none has, an
// arbitrary one. l.mu is held.
func (l *Limiter) forget(now int64) {
	for a, b := range l.addrs {
		if l.refilled(b, now) >= l.burst {
			delete(l.addrs, a)
		}
	}
	for a := range l.addrs {
		if len(l.addrs) < l.max {
			break
		}
		delete(l.addrs, a)
	}
}

// SetRetryAfter tells a blocked address when it has a failure again, in whole seconds.
func SetRetryAfter(w http.ResponseWriter, after time.Duration) {
	w.Header().Set("Retry-After", strconv.Itoa(max(int(math.Ceil(after.Seconds())), 1)))
}
