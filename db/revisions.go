package db

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/db/driver"
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
	// declared holds what assigning a revision declares (declared, below), and names the
	// names of its resources (resourceNames).
	declared map[revisionKey]resourceDiff
	names    map[revisionKey]map[string]bool
	// encoded holds each revision's resources as JSON, for the declarations that declare them
	// as they are (encodedResources).
	encoded map[revisionKey]encodedRevision
	// sizes holds each revision's hq.Size, what a node's declaration of it encodes to.
	sizes map[revisionKey]hq.Size
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
			delete(r.names, k)
			delete(r.encoded, k)
			delete(r.sizes, k)
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
func (s *Store) resources(ctx context.Context, q driver.Queries, module string, revision int64) ([]hq.Resource, error) {
	return remember(&s.revisions, &s.revisions.m, revisionKey{module, revision}, func() ([]hq.Resource, error) {
		row, err := q.ModuleRevisionGet(ctx, driver.ModuleRevisionGetParams{Module: module, Revision: revision})
		if err != nil {
			return nil, notFound(err, "no revision %d of module %s", revision, module)
		}
		return decodeResources(row.Resources)
	})
}

// declared is what assigning a module's revision writes on a node: every resource a new row,
// whose digests are computed once for every node it is assigned to.
func (s *Store) declared(ctx context.Context, q driver.Queries, module string, revision int64) (resourceDiff, error) {
	return remember(&s.revisions, &s.revisions.declared, revisionKey{module, revision}, func() (resourceDiff, error) {
		rs, err := s.resources(ctx, q, module, revision)
		return diffResources(nil, rs, revision), err
	})
}

// encodedRevision is a revision's resources as json.Marshal writes them, or, when any of them
// is a template, which each node fills in with its own values, only that.
type encodedRevision struct {
	json      []byte
	templated bool
}

// encodedResources returns the revision's resources encoded, for digesting declarations
// without encoding the same resources again for every node; the bytes are shared.
func (s *Store) encodedResources(ctx context.Context, q driver.Queries, module string, revision int64) (encodedRevision, error) {
	return remember(&s.revisions, &s.revisions.encoded, revisionKey{module, revision}, func() (encodedRevision, error) {
		rs, err := s.resources(ctx, q, module, revision)
		if err != nil {
			return encodedRevision{}, err
		}
		if templated(rs) {
			return encodedRevision{templated: true}, nil // each node's own, encoded for it
		}
		b, err := json.Marshal(rs)
		return encodedRevision{json: b}, err
	})
}

// size returns the revision's hq.Size, worked out once for every node it is declared on.
func (s *Store) size(ctx context.Context, q driver.Queries, module string, revision int64) (hq.Size, error) {
	return remember(&s.revisions, &s.revisions.sizes, revisionKey{module, revision}, func() (hq.Size, error) {
		rs, err := s.resources(ctx, q, module, revision)
		if err != nil {
			return hq.Size{}, err
		}
		return hq.SizeOf(rs)
	})
}

// writeRevisionRows writes a revision's resources as rows of module_revision_resources, which
// assignments copy; rows already there stay.
func writeRevisionRows(ctx context.Context, q driver.Queries, module string, revision int64, resources []hq.Resource) error {
	if len(resources) == 0 {
		return nil
	}
	rows, err := json.Marshal(diffResources(nil, resources, revision).added)
	if err != nil {
		return err
	}
	return q.ModuleRevisionResourcesInsert(ctx, driver.ModuleRevisionResourcesInsertParams{Module: module, Revision: revision, Rows: string(rows)})
}

// fillRevisionRows writes the rows of the revisions uploaded before module_revision_resources
// was made, one transaction each, when the database is opened.
func (s *Store) fillRevisionRows(ctx context.Context) error {
	missing, err := s.wq.ModuleRevisionsWithoutResources(ctx)
	if err != nil {
		return err
	}
	for _, m := range missing {
		rs, err := decodeResources(m.Resources)
		if err != nil {
			return fmt.Errorf("module %s revision %d: %w", m.Module, m.Revision, err)
		}
		if err := s.inTx(ctx, func(q driver.Queries) error { return writeRevisionRows(ctx, q, m.Module, m.Revision, rs) }); err != nil {
			return fmt.Errorf("module %s revision %d: %w", m.Module, m.Revision, err)
		}
	}
	return nil
}

// resourceNames is the set of a revision's resource names, which every report that is not a
// repeat is checked against: made once, not once a report.
func (s *Store) resourceNames(ctx context.Context, q driver.Queries, module string, revision int64) (map[string]bool, error) {
	return remember(&s.revisions, &s.revisions.names, revisionKey{module, revision}, func() (map[string]bool, error) {
		rs, err := s.resources(ctx, q, module, revision)
		names := make(map[string]bool, len(rs))
		for _, r := range rs {
			names[r.Name] = true
		}
		return names, err
	})
}

// remember returns m's entry for k, made by build when there is none. Entries made while a
// write transaction is open are noted, to be forgotten if it does not commit.
func remember[T any](r *revisions, m *map[revisionKey]T, k revisionKey, build func() (T, error)) (T, error) {
	r.mu.Lock()
	v, ok := (*m)[k]
	r.mu.Unlock()
	if ok {
		return v, nil
	}
	v, err := build()
	if err != nil {
		return v, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if *m == nil || len(*m) >= maxCachedRevisions {
		*m = map[revisionKey]T{}
	}
	(*m)[k] = v
	if r.writing {
		r.added = append(r.added, k)
	}
	return v, nil
}

// clear forgets every decoded revision.
func (r *revisions) clear() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.m, r.declared, r.names, r.encoded, r.sizes = nil, nil, nil, nil, nil
}
