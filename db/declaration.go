package db

import (
	"github.com/meshhq/hq/db/internal/dbsqlc"

	"context"
	"sync"
	"time"

	"github.com/meshhq/hq"
)

// Compose builds the node's declaration from one snapshot of the database and records it as
// a send. The send is recorded only if the generation it was composed from is still the
// node's; otherwise it composes again, so no send ever carries a view older than its row says.
func (s *Store) Compose(ctx context.Context, node, instance string) (hq.Declaration, error) {
	for {
		d, err := s.compose(ctx, node)
		if err != nil {
			return d, err
		}
		d.ComposedBy, d.ComposedAt = instance, s.Now().UTC()
		stale := false
		err = s.inTx(ctx, func(q dbsqlc.Querier) error {
			n, err := q.NodeGet(ctx, node)
			if err != nil {
				return notFound(err, "no node %s", node)
			}
			if n.Generation != d.Generation {
				stale = true
				return nil
			}
			d.SendID, err = q.SendInsert(ctx, dbsqlc.SendInsertParams{
				Node: node, Generation: d.Generation, Digest: d.Digest, Resources: int64(d.ResourceCount()),
				ComposedBy: instance, SentAt: hq.FormatTime(d.ComposedAt),
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
	err := s.inReadTx(ctx, func(q dbsqlc.Querier) error {
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
		for _, r := range rows {
			res, err := s.resources(ctx, q, r.Module, r.Revision)
			if err != nil {
				return err
			}
			// The declaration digested and signed is concrete: templates are filled in here.
			if res, err = render(res, values); err != nil {
				return hq.Errorf(hq.CodeConflict, "module %s cannot be declared on node %s: %v", r.Module, node, err)
			}
			d.Modules = append(d.Modules, hq.DeclaredModule{Name: r.Module, Revision: r.Revision, Taken: r.Taken == 1, Resources: res})
		}
		return nil
	})
	d.Digest = d.ComputeDigest()
	return d, err
}

// WaitGeneration blocks until the node's generation exceeds after, ctx ends, or wait passes,
// and returns the generation it last saw. Changes made through this store wake it at once;
// changes made by another process on the same database are seen by the store's watcher.
func (s *Store) WaitGeneration(ctx context.Context, node string, after int64, wait time.Duration) (int64, error) {
	s.watchOnce.Do(func() { s.eng.startWatch(s) })
	deadline := time.NewTimer(wait)
	defer deadline.Stop()
	for {
		bell := s.bells.bell(node)
		gen, err := s.NodeGeneration(ctx, node)
		if err != nil || gen > after {
			return gen, err
		}
		select {
		case <-bell:
		case <-deadline.C:
			return gen, nil
		case <-ctx.Done():
			return gen, ctx.Err()
		}
	}
}

// watch reads every node's generation once a period and rings the bells of those another
// process changed: one query for the whole mesh, however many hosts are waiting. The first look
// (look without ring) comes before any waiter reads its own generation, so a change made by
// another process after that read is always one the watcher sees move.
func (s *Store) watch(known map[string]int64) {
	tick := time.NewTicker(s.WatchEvery)
	defer tick.Stop()
	for {
		select {
		case <-s.closed:
			return
		case <-tick.C:
		}
		s.look(known, true)
	}
}

// look reads every node's generation into known and, when ring is set, rings the bell of each
// that moved or that is new since the last look (registered by another process).
func (s *Store) look(known map[string]int64, ring bool) {
	rows, err := s.rq.NodeGenerationList(context.Background())
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

// bells wakes the long-polls of nodes whose generation changed.
type bells struct {
	mu sync.Mutex
	ch map[string]chan struct{}
}

func (b *bells) bell(node string) <-chan struct{} {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.ch == nil {
		b.ch = map[string]chan struct{}{}
	}
	c, ok := b.ch[node]
	if !ok {
		c = make(chan struct{})
		b.ch[node] = c
	}
	return c
}

func (b *bells) ring(nodes ...string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, n := range nodes {
		if c, ok := b.ch[n]; ok {
			close(c)
			delete(b.ch, n)
		}
	}
}

// ringAll wakes every waiter, for when changes may have been missed.
func (b *bells) ringAll() {
	b.mu.Lock()
	defer b.mu.Unlock()
	for n, c := range b.ch {
		close(c)
		delete(b.ch, n)
	}
}
