package db

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/db/internal/dbsqlc"
)

// revisions keeps module revisions decoded. A revision never changes once written, and every
// declaration of a fleet would otherwise decode the same JSON again, once per node and send.
//
// Only what a committed transaction wrote may stay: an entry added while a write transaction
// is open is noted, and forgotten if that transaction does not commit, or a rolled-back
// upload's resources would be served under the revision number the next upload takes.
type revisions struct {
	mu sync.Mutex
	m  map[revisionKey][]hq.Resource
	// declared holds what assigning a revision declares (declared, below).
	declared map[revisionKey]resourceDiff
	// writing is set while a write transaction is open; added are the entries since it began.
	writing bool
	added   []revisionKey
}

// begin notes that a write transaction opened; end that it committed or not.
func (r *revisions) begin() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.writing, r.added = true, r.added[:0]
}

func (r *revisions) end(committed bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !committed {
		for _, k := range r.added {
			delete(r.m, k)
			delete(r.declared, k)
		}
	}
	r.writing, r.added = false, r.added[:0]
}

type revisionKey struct {
	module   string
	revision int64
}

// maxCachedRevisions bounds the cache; past it the cache starts over, which costs one decode
// per revision in use.
const maxCachedRevisions = 1024

// resources returns the resources of a module revision; the slice is shared and must not be
// changed.
func (s *Store) resources(ctx context.Context, q dbsqlc.Querier, module string, revision int64) ([]hq.Resource, error) {
	k := revisionKey{module, revision}
	s.revisions.mu.Lock()
	rs, ok := s.revisions.m[k]
	s.revisions.mu.Unlock()
	if ok {
		return rs, nil
	}
	row, err := q.ModuleRevisionGet(ctx, dbsqlc.ModuleRevisionGetParams{Module: module, Revision: revision})
	if err != nil {
		return nil, notFound(err, "no revision %d of module %s", revision, module)
	}
	if rs, err = decodeResources(row.Resources); err != nil {
		return nil, err
	}
	s.revisions.mu.Lock()
	defer s.revisions.mu.Unlock()
	if s.revisions.m == nil || len(s.revisions.m) >= maxCachedRevisions {
		s.revisions.m = map[revisionKey][]hq.Resource{}
	}
	s.revisions.m[k] = rs
	if s.revisions.writing {
		s.revisions.added = append(s.revisions.added, k)
	}
	return rs, nil
}

// clear forgets every decoded revision.
func (r *revisions) clear() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.m, r.declared = nil, nil
}

// declared is what assigning a module's revision writes on a node: every resource a new row,
// whose digests are computed, and the rows marshalled, once for every node it is assigned to.
func (s *Store) declared(ctx context.Context, q dbsqlc.Querier, module string, revision int64) (resourceDiff, error) {
	k := revisionKey{module, revision}
	s.revisions.mu.Lock()
	d, ok := s.revisions.declared[k]
	s.revisions.mu.Unlock()
	if ok {
		return d, nil
	}
	rs, err := s.resources(ctx, q, module, revision)
	if err != nil {
		return d, err
	}
	d = diffResources(nil, rs)
	rows, err := json.Marshal(d.added)
	if err != nil {
		return d, err
	}
	d.addedRows = string(rows)
	s.revisions.mu.Lock()
	defer s.revisions.mu.Unlock()
	if s.revisions.declared == nil || len(s.revisions.declared) >= maxCachedRevisions {
		s.revisions.declared = map[revisionKey]resourceDiff{}
	}
	s.revisions.declared[k] = d
	if s.revisions.writing {
		s.revisions.added = append(s.revisions.added, k)
	}
	return d, nil
}
