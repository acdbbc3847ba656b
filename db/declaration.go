package db

import (
	"github.com/meshhq/hq/db/driver"

	"context"
	"encoding/json"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/tmpl"
)

// Compose builds the node's declaration from one snapshot of the database and records it as
// a send. The send is recorded only if the generation it was composed from is still the
// node's; otherwise it composes again, so no send ever carries a view older than its row says.
func (s *Store) Compose(ctx context.Context, node, instance string) (hq.Declaration, error) {
	return s.ComposeSigned(ctx, node, instance, nil)
}

// ComposeSigned is Compose with the declaration signed by sign before its send is recorded,
// so the send keeps the signature the host receives: a report that carries another is not
// believed (see Ingest).
func (s *Store) ComposeSigned(ctx context.Context, node, instance string, sign func(*hq.Declaration)) (hq.Declaration, error) {
	for {
		d, err := s.compose(ctx, node)
		if err != nil {
			return d, err
		}
		d.ComposedBy, d.ComposedAt = instance, s.clock().UTC()
		if sign != nil {
			sign(&d)
		}
		var stale bool
		// Every host fetches its declaration after each change, so a fleet's sends arrive
		// together and share commits (batch.go); fn may run twice, so it starts from nothing.
		err = s.inBatchTx(ctx, func(ctx context.Context, q driver.Queries) error {
			stale, d.SendID, d.Retry = false, 0, nil
			n, err := q.NodeGet(ctx, node)
			if err != nil {
				return notFound(err, "no node %s", node)
			}
			if n.Generation != d.Generation {
				stale = true
				return nil
			}
			d.SendID, err = q.SendInsert(ctx, driver.SendInsertParams{
				Node: node, Generation: d.Generation, Digest: d.Digest, Resources: int64(d.ResourceCount()),
				ComposedBy: instance, SentAt: hq.FormatTime(d.ComposedAt), Signature: d.Signature,
			})
			if err != nil {
				return err
			}
			retry, err := q.ResourceStateRetryList(ctx, node)
			for _, r := range retry {
				d.Retry = append(d.Retry, hq.Ref(r.Module, r.Resource))
			}
			return err
		})
		if err != nil || !stale {
			return d, err
		}
	}
}

// Declaration composes the node's declaration for reading, without recording a send: what
// an operator sees is not a delivery.
func (s *Store) Declaration(ctx context.Context, node string) (hq.Declaration, error) {
	return s.compose(ctx, node)
}

func (s *Store) compose(ctx context.Context, node string) (hq.Declaration, error) {
	d := hq.Declaration{Node: node, Modules: []hq.DeclaredModule{}}
	var names []declaredNames
	var encoded [][]byte
	err := s.inReadTx(ctx, func(q driver.Queries) error {
		n, err := q.NodeGet(ctx, node)
		if err != nil {
			return notFound(err, "no node %s", node)
		}
		d.Generation = n.Generation
		rows, err := q.AssignmentDeclaration(ctx, node)
		if err != nil {
			return err
		}
		values := valuesOf(n)
		// Writes keep a declaration within the bound; one that passes it anyway (written before
		// the bound was, or with a bound since lowered) is refused before it is built.
		pins := make([]pin, 0, len(rows))
		for _, r := range rows {
			pins = append(pins, pin{r.Module, r.Revision})
		}
		if err := s.checkSize(ctx, q, pins, values); err != nil {
			return err
		}
		left := s.opt.MaxDeclaration
		d.Modules = make([]hq.DeclaredModule, 0, len(rows))
		names = make([]declaredNames, 0, len(rows))
		encoded = make([][]byte, 0, len(rows))
		for _, r := range rows {
			m, enc, rn, err := s.declareModule(ctx, q, node, r, values, &left)
			if err != nil {
				return err
			}
			d.Modules, encoded, names = append(d.Modules, m), append(encoded, enc), append(names, rn)
		}
		return nil
	})
	if err != nil {
		return d, err
	}
	// Inside the digest, so inside the signature: each value sealed to this node alone.
	if d.Secrets, err = s.sealFor(ctx, node, secretPinsOf(d.Modules)); err != nil {
		return d, err
	}
	d.SetDigestEncoded(encoded)
	s.composed.remember(d.Digest, names)
	return d, nil
}

// declareModule is one assigned module as the node's declaration holds it, its resources
// encoded for the digest, and their names. Its templates render within *left, the bytes the
// declaration has still room for, and take what they render to from it.
func (s *Store) declareModule(ctx context.Context, q driver.Queries, node string, r driver.AssignmentDeclarationRow, values tmpl.Values, left *int) (hq.DeclaredModule, []byte, declaredNames, error) {
	m := hq.DeclaredModule{Name: r.Module, Revision: r.Revision, Taken: r.Taken}
	res, err := s.resources(ctx, q, r.Module, r.Revision)
	if err != nil {
		return m, nil, declaredNames{}, err
	}
	names, err := s.resourceNames(ctx, q, r.Module, r.Revision)
	if err != nil {
		return m, nil, declaredNames{}, err
	}
	enc, err := s.encodedResources(ctx, q, r.Module, r.Revision)
	if err != nil {
		return m, nil, declaredNames{}, err
	}
	// The declaration digested and signed is concrete: templates are filled in here, and only
	// a revision with templates is encoded again for the node.
	if enc.templated {
		if res, err = renderWithin(res, values, left); err != nil {
			return m, nil, declaredNames{}, hq.Errorf(hq.CodeConflict, "module %s cannot be declared on node %s: %v", r.Module, node, err)
		}
		if enc.json, err = json.Marshal(res); err != nil {
			return m, nil, declaredNames{}, err
		}
	}
	m.Resources = res
	return m, enc.json, declaredNames{r.Module, names}, nil
}

// composed remembers, by digest, the resource names of the declarations this store composed,
// so that a report of one can be checked against it without reading it again (namesEvery).
// The digest covers the node, the generation and every resource, so an entry never goes
// stale. Past maxComposed the memory starts over, and a report of a declaration no longer
// remembered is checked as any other is.
type composed struct {
	mu sync.Mutex
	m  map[string][]declaredNames
}

// declaredNames are a module's resource names in a declaration; the map is the revision's,
// shared, and never changed.
type declaredNames struct {
	module string
	names  map[string]bool
}

// maxComposed bounds composed: more than a fleet's nodes, each with one declaration in use.
const maxComposed = 100_000

func (c *composed) remember(digest string, names []declaredNames) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= maxComposed {
		c.m = make(map[string][]declaredNames)
	}
	c.m[digest] = names
}

// namesEvery reports whether results, which name no resource twice, name every resource of
// the declaration digest: false when it names others, fewer, or this store did not compose
// it (or no longer remembers it).
func (c *composed) namesEvery(digest string, results []hq.Result) bool {
	c.mu.Lock()
	names, ok := c.m[digest]
	c.mu.Unlock()
	if !ok {
		return false
	}
	total := 0
	for _, d := range names {
		total += len(d.names)
	}
	if len(results) != total {
		return false
	}
	for _, r := range results {
		i := slices.IndexFunc(names, func(d declaredNames) bool { return d.module == r.Module })
		if i < 0 || !names[i].names[r.Resource] {
			return false
		}
	}
	return true
}

// WaitGeneration blocks until the node's generation exceeds after, ctx ends, or wait passes,
// and returns the generation it last saw. Changes made through this store wake it at once;
// changes made by another process on the same database are seen by the store's watcher.
func (s *Store) WaitGeneration(ctx context.Context, node string, after int64, wait time.Duration) (int64, error) {
	deadline := time.NewTimer(wait)
	defer deadline.Stop()
	for {
		bell := make(chan struct{})
		stop := s.OnGeneration(node, func() { close(bell) })
		gen, err := s.NodeGeneration(ctx, node)
		if err != nil || gen > after {
			stop()
			return gen, err
		}
		select {
		case <-bell:
		case <-deadline.C:
			stop()
			return gen, nil
		case <-ctx.Done():
			stop()
			return gen, ctx.Err()
		}
	}
}

// OnGeneration calls f, once, when the node's generation may have moved, unless stop is
// called first. It is how a long-poll waits without a goroutine of its own: register, then
// read the generation, so a change between the two is never missed. f runs on the goroutine
// of the change, after its commit, and must not block.
func (s *Store) OnGeneration(node string, f func()) (stop func()) {
	return s.bells.listen(node, f)
}

// watchGenerations reads every node's generation once a period and rings the bells of those another
// process changed: one query for the whole mesh, however many hosts are waiting. The first look
// (look without ring) comes before any waiter reads its own generation, so a change made by
// another process after that read is always one the watcher sees move.
//
// Each period it first reads the nodes' count and the sum of their generations, which the
// database adds up without handing a row to Go: in a fleet's steady state nothing moves, and
// the generations of 50,000 nodes are not read one by one every second for nothing.
func (s *Store) watchGenerations(ctx context.Context, ready func()) {
	known := map[string]int64{}
	// Unread, the first tick looks.
	last, err := s.rq.NodeGenerationTotal(ctx)
	if err != nil {
		s.log.Warn("reading the nodes' generations", "err", err)
	}
	s.look(ctx, known, false)
	ready()
	tick := time.NewTicker(s.opt.WatchEvery)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		total, err := s.rq.NodeGenerationTotal(ctx)
		if err != nil || total == last {
			continue // unreadable now, or nothing moved
		}
		// Read before the look: a change made after it is seen by the look or by the next total.
		last = total
		s.look(ctx, known, true)
	}
}

// look reads every node's generation into known and, when ring is set, rings the bell of each
// that moved or that is new since the last look (registered by another process).
func (s *Store) look(ctx context.Context, known map[string]int64, ring bool) {
	rows, err := s.rq.NodeGenerationList(ctx)
	if err != nil {
		return // the next tick tries again; waiters still time out on their own
	}
	for _, r := range rows {
		if g, ok := known[r.Name]; ring && (!ok || g != r.Generation) {
			s.bells.ring(r.Name)
		}
		known[r.Name] = r.Generation
	}
}

// bells wakes the long-polls of nodes whose generation changed: each listener is called once,
// at the first ring after it listened, and then forgotten.
type bells struct {
	mu   sync.Mutex
	next uint64
	on   map[string]map[uint64]func()
	// rings counts the rings, whether anyone listened or not. It moves under mu, before the
	// listeners are taken: a waiter that listens and then sees it unmoved since a read knows
	// that every change the read missed rings it.
	rings atomic.Uint64
}

func (b *bells) listen(node string, f func()) (stop func()) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.on == nil {
		b.on = map[string]map[uint64]func(){}
	}
	fs := b.on[node]
	if fs == nil {
		fs = map[uint64]func(){}
		b.on[node] = fs
	}
	b.next++
	id := b.next
	fs[id] = f
	return func() {
		b.mu.Lock()
		defer b.mu.Unlock()
		if fs := b.on[node]; fs != nil {
			delete(fs, id)
			if len(fs) == 0 {
				delete(b.on, node)
			}
		}
	}
}

func (b *bells) ring(nodes ...string) {
	b.mu.Lock()
	b.rings.Add(1)
	var due []func()
	for _, n := range nodes {
		for _, f := range b.on[n] {
			due = append(due, f)
		}
		delete(b.on, n)
	}
	b.mu.Unlock()
	call(due)
}

// ringAll wakes every waiter, for when changes may have been missed.
func (b *bells) ringAll() {
	b.mu.Lock()
	b.rings.Add(1)
	var due []func()
	for _, fs := range b.on {
		for _, f := range fs {
			due = append(due, f)
		}
	}
	b.on = nil
	b.mu.Unlock()
	call(due)
}

// call runs the listeners a ring collected, outside the lock, so one may listen again.
func call(fs []func()) {
	for _, f := range fs {
		f()
	}
}
