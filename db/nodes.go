package db

import (
	"github.com/meshhq/hq/db/internal/dbsqlc"

	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"database/sql"
	"encoding/hex"
	"errors"

	"github.com/meshhq/hq"
)

// CreateNode registers a node and returns its token, which is stored only as a hash.
func (s *Store) CreateNode(ctx context.Context, name string) (token string, err error) {
	if !hq.ValidName(name) {
		return "", hq.NameError("node", name)
	}
	token = rand.Text()
	err = s.inTx(ctx, func(q *dbsqlc.Queries) error {
		if _, err := q.NodeGet(ctx, name); err == nil {
			return hq.Errorf(hq.CodeConflict, "node %s is already registered", name)
		} else if !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		return q.NodeInsert(ctx, dbsqlc.NodeInsertParams{Name: name, TokenHash: hashToken(token), CreatedAt: s.now()})
	})
	return token, err
}

// DeleteNode forgets a node and everything recorded about it.
func (s *Store) DeleteNode(ctx context.Context, name string, ifMatch *int64) error {
	return s.inTx(ctx, func(q *dbsqlc.Queries) error {
		if _, err := lockNode(ctx, q, name, ifMatch); err != nil {
			return err
		}
		if _, err := q.NodeDelete(ctx, name); err != nil {
			return err
		}
		// The history goes too: a node registered again under this name starts clean.
		return q.TransitionDeleteByNode(ctx, name)
	})
}

// NodeTokenValid reports whether token is the node's own.
func (s *Store) NodeTokenValid(ctx context.Context, name, token string) (bool, error) {
	n, err := s.reader().NodeGet(ctx, name)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return subtle.ConstantTimeCompare([]byte(n.TokenHash), []byte(hashToken(token))) == 1, nil
}

// NodeGeneration returns the node's current generation.
func (s *Store) NodeGeneration(ctx context.Context, name string) (int64, error) {
	n, err := s.reader().NodeGet(ctx, name)
	if err != nil {
		return 0, notFound(err, "no node %s", name)
	}
	return n.Generation, nil
}

// lockNode reads the node inside a write transaction and checks If-Match.
func lockNode(ctx context.Context, q *dbsqlc.Queries, name string, ifMatch *int64) (dbsqlc.Node, error) {
	n, err := q.NodeGet(ctx, name)
	if err != nil {
		return n, notFound(err, "no node %s", name)
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
