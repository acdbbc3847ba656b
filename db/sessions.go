package db

import (
	"github.com/meshhq/hq/db/driver"

	"context"
	"time"

	"github.com/meshhq/hq"
)

// CreateSession records a signed-in browser until expires. secret is what the browser will
// present; only its hash is stored. Sessions past their expiry are deleted in the same
// transaction, so the table holds no more than the sessions still open.
func (s *Store) CreateSession(ctx context.Context, secret string, expires time.Time) error {
	return s.inTx(ctx, func(q driver.Queries) error {
		now := s.now()
		if _, err := q.WebSessionDeleteExpired(ctx, now); err != nil {
			return err
		}
		return q.WebSessionInsert(ctx, driver.WebSessionInsertParams{
			IDHash: hashToken(secret), CreatedAt: now, ExpiresAt: hq.FormatTime(expires),
		})
	})
}

// SessionValid reports whether secret belongs to a session that has not ended or expired.
func (s *Store) SessionValid(ctx context.Context, secret string) (bool, error) {
	n, err := s.reader().WebSessionValid(ctx, driver.WebSessionValidParams{IDHash: hashToken(secret), Now: s.now()})
	return n > 0, err
}

// DeleteSession ends a session at once: its secret is refused from now on. Ending one that
// does not exist is not an error, so signing out twice is harmless.
func (s *Store) DeleteSession(ctx context.Context, secret string) error {
	return s.inTx(ctx, func(q driver.Queries) error {
		return q.WebSessionDelete(ctx, hashToken(secret))
	})
}
