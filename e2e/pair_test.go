package e2e

import (
	"sync"
	"testing"
)

// pair is two controllers on one database, as an operator runs them for a standby: the test
// beds run on one so that what they check holds with hosts split between the two and the
// operator's writes arriving at both.
type pair struct {
	a, b *controller
	mu   sync.Mutex
	// hosts is how many hosts were given the pair: they take turns at which is first.
	hosts int
}

// startPair starts two hq serve processes on db with the same env.
func startPair(t testing.TB, db string, env ...string) *pair {
	t.Helper()
	return &pair{a: startController(t, db, env...), b: startController(t, db, env...)}
}

// next is HOSTD_CONTROLLER for the next host: both controllers, the first of them in turn,
// so the hosts are split between the two and each can move to the other.
func (p *pair) next() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.hosts++
	if p.hosts%2 == 1 {
		return p.a.url + "," + p.b.url
	}
	return p.b.url + "," + p.a.url
}

// client is an operator client whose calls alternate between the two controllers.
func (p *pair) client(t testing.TB) *client {
	return newClient(t, p.a.url, p.b.url)
}
