package db

import (
	"github.com/meshhq/hq/db/driver"

	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"database/sql"
	"encoding/hex"
	"errors"
	"time"

	"github.com/meshhq/hq"
)

// CreateNode registers a node without labels; see CreateLabelledNode.
func (s *Store) CreateNode(ctx context.Context, name string) (token string, generation int64, err error) {
	return s.CreateLabelledNode(ctx, name, nil)
}

// CreateLabelledNode registers a node with labels and returns its token, which is stored only
// as a hash, and its generation: 0 for a new name with nothing placed on it, above every
// generation the name had before when it was deleted and registered again. The node gains the
// module of every placement its labels match, in the same transaction. It returns invalid for
// a bad name or label, and conflict for a name that is registered or for a module or path it
// would get twice.
func (s *Store) CreateLabelledNode(ctx context.Context, name string, labels map[string]string) (token string, generation int64, err error) {
	if !hq.ValidName(name) {
		return "", 0, hq.NameError("node", name)
	}
	if err := hq.ValidateLabels(labels); err != nil {
		return "", 0, err
	}
	text, err := encodePairs(labels)
	if err != nil {
		return "", 0, err
	}
	token = rand.Text()
	now := s.now()
	err = s.inTx(ctx, func(q driver.Queries) error {
		n, err := q.NodeGetAny(ctx, name)
		switch {
		case err == nil && !n.DeletedAt.Valid:
			return hq.Errorf(hq.CodeConflict, "node %s is already registered", name)
		case err == nil:
			// Registered again after a delete: the history stays, the generations go on above it.
			if err := q.NodeRegisterAgain(ctx, driver.NodeRegisterAgainParams{Name: name, TokenHash: hashToken(token), CreatedAt: now}); err != nil {
				return err
			}
			n.Generation++
		case errors.Is(err, sql.ErrNoRows):
			if err := q.NodeInsert(ctx, driver.NodeInsertParams{Name: name, TokenHash: hashToken(token), CreatedAt: now}); err != nil {
				return err
			}
		default:
			return err
		}
		generation = n.Generation
		if err := q.NodeRegistrationInsert(ctx, driver.NodeRegistrationInsertParams{Node: name, RegisteredAt: now, FirstGeneration: n.Generation}); err != nil {
			return err
		}
		// A name registered again starts with the labels it is registered with, and no vars.
		if err := q.NodeSetLabels(ctx, driver.NodeSetLabelsParams{Name: name, Labels: text}); err != nil {
			return err
		}
		if err := q.NodeSetVars(ctx, driver.NodeSetVarsParams{Name: name, Vars: "{}"}); err != nil {
			return err
		}
		placed, err := s.placeOnNode(ctx, q, name, labels)
		if err != nil || !placed {
			return err
		}
		generation, err = q.NodeBumpGeneration(ctx, name)
		return err
	})
	return token, generation, err
}

// DeleteNode marks a node deleted: its token stops working, its assignments go (its resources
// leave with 'removed' transitions), and its history stays until retention prunes it. It
// returns not_found for a node that is not registered, conflict when ifMatch does not hold,
// and the node's last generation.
func (s *Store) DeleteNode(ctx context.Context, name string, ifMatch *int64) (int64, error) {
	now := s.now()
	var gen int64
	err := s.inTx(ctx, func(q driver.Queries) error {
		n, err := lockNode(ctx, q, name, ifMatch)
		if err != nil {
			return err
		}
		gen = n.Generation
		if err := q.AssignmentDeleteByNode(ctx, name); err != nil {
			return err
		}
		if err := q.NodeRegistrationEnd(ctx, driver.NodeRegistrationEndParams{Node: name, DeletedAt: sql.NullString{String: now, Valid: true}, LastGeneration: sql.NullInt64{Int64: n.Generation, Valid: true}}); err != nil {
			return err
		}
		// A token nobody holds: the unique index on token_hash wants one per row.
		return q.NodeMarkDeleted(ctx, driver.NodeMarkDeletedParams{Name: name, DeletedAt: sql.NullString{String: now, Valid: true}, VoidTokenHash: "deleted:" + hashToken(rand.Text())})
	})
	return gen, err
}

// DeletedAt says when a node that is no longer registered was deleted; not_found when the
// name was never registered or is registered now.
func (s *Store) DeletedAt(ctx context.Context, name string) (time.Time, error) {
	n, err := s.reader().NodeGetAny(ctx, name)
	if err != nil {
		return time.Time{}, notFound(err, "no node %s", name)
	}
	if !n.DeletedAt.Valid {
		return time.Time{}, hq.Errorf(hq.CodeNotFound, "node %s is registered, not deleted", name)
	}
	return hq.ParseTime(n.DeletedAt.String), nil
}

// A NodeCheck is what one read of a node said of a request it made: whether the token is the
// node's own, and the node's generation then. A long-poll checked this way waits on that
// generation without reading it again (GenerationSince).
type NodeCheck struct {
	Valid      bool
	Generation int64
	// rings is how many times the bells had rung before the read.
	rings uint64
}

// CheckNodeToken reads whether token is the node's own, and the node's generation.
func (s *Store) CheckNodeToken(ctx context.Context, name, token string) (NodeCheck, error) {
	c := NodeCheck{rings: s.bells.rings.Load()}
	// One row by its key, asked of every long-poll a host makes: it is not worth the two
	// goroutines a query on a context that can end costs (batch.go).
	row, err := s.reader().NodeTokenCheck(context.WithoutCancel(ctx), name)
	if errors.Is(err, sql.ErrNoRows) {
		return c, nil
	}
	if err != nil {
		return c, err
	}
	c.Valid = subtle.ConstantTimeCompare([]byte(row.TokenHash), []byte(hashToken(token))) == 1
	if c.Valid {
		c.Generation = row.Generation
	}
	return c, nil
}

// GenerationSince returns the generation c read, and whether a waiter that has listened
// (OnGeneration) may take it as its own read: no bell rang from before c's read until now, so
// any change the read missed will ring the waiter's bell. When false, read it again.
func (s *Store) GenerationSince(c NodeCheck) (int64, bool) {
	return c.Generation, c.Valid && s.bells.rings.Load() == c.rings
}

// NodeGeneration returns the node's current generation.
func (s *Store) NodeGeneration(ctx context.Context, name string) (int64, error) {
	gen, err := s.reader().NodeGeneration(ctx, name)
	if err != nil {
		return 0, notFound(err, "no node %s", name)
	}
	return gen, nil
}

// lockNode reads the node inside a write transaction and checks If-Match.
func lockNode(ctx context.Context, q driver.Queries, name string, ifMatch *int64) (driver.Node, error) {
	return lockNodeWithToken(ctx, q, name, "", ifMatch)
}

// lockNodeWithToken is lockNode for a call whose token is checked in its write: when tokenHash
// is set and is not the node's (or the node is gone), ErrTokenRefused, before anything else.
func lockNodeWithToken(ctx context.Context, q driver.Queries, name, tokenHash string, ifMatch *int64) (driver.Node, error) {
	n, err := q.NodeGet(ctx, name)
	if tokenHash != "" && (errors.Is(err, sql.ErrNoRows) || err == nil && subtle.ConstantTimeCompare([]byte(n.TokenHash), []byte(tokenHash)) != 1) {
		return n, ErrTokenRefused
	}
	if err != nil {
		return n, nodeNotFound(ctx, q, err, name)
	}
	if ifMatch != nil && *ifMatch != n.Generation {
		return n, hq.Conflict(name, *ifMatch, n.Generation)
	}
	return n, nil
}

func hashToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// AnyNodeToken reports whether token belongs to any node.
func (s *Store) AnyNodeToken(ctx context.Context, token string) (bool, error) {
	found, err := s.reader().NodeExistsByTokenHash(ctx, hashToken(token))
	return found, err
}

// nodeNotFound turns sql.ErrNoRows for a node into not_found, saying so when the node was
// deleted rather than never registered.
func nodeNotFound(ctx context.Context, q driver.Queries, err error, name string) error {
	if !errors.Is(err, sql.ErrNoRows) {
		return err
	}
	if n, err := q.NodeGetAny(ctx, name); err == nil && n.DeletedAt.Valid {
		return hq.Errorf(hq.CodeNotFound, "node %s was deleted at %s; its history is still at /nodes/%s/transitions, /reports and /sends", name, n.DeletedAt.String, name)
	}
	return hq.Errorf(hq.CodeNotFound, "no node %s", name)
}
