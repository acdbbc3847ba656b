package db

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/meshhq/hq/db/driver"

	"github.com/meshhq/hq"
)

// CreateSession records a signed-in browser until expires, as who. secret is what the browser
// will present; only its hash is stored. Sessions past their expiry are deleted in the same
// transaction, so the table holds no more than the sessions still open.
func (s *Store) CreateSession(ctx context.Context, secret string, expires time.Time, who hq.Identity) error {
	return s.inTx(ctx, func(q driver.Queries) error {
		now := s.now()
		if _, err := q.WebSessionDeleteExpired(ctx, now); err != nil {
			return err
		}
		return q.WebSessionInsert(ctx, driver.WebSessionInsertParams{
			IDHash: hashToken(secret), CreatedAt: now, ExpiresAt: hq.FormatTime(expires),
			Operator: who.Operator, Role: string(who.Role), TokenID: who.TokenID, Via: signIn(who.SignIn),
		})
	})
}

// Session returns who secret's session is, and whether there is one that has not ended or
// expired. A session opened with an operator token is that operator's binding as it is now,
// and ends with the token.
func (s *Store) Session(ctx context.Context, secret string) (hq.Identity, bool, error) {
	r, err := s.reader().WebSessionGet(ctx, driver.WebSessionGetParams{IDHash: hashToken(secret), Now: s.now()})
	if errors.Is(err, sql.ErrNoRows) {
		return hq.Identity{}, false, nil
	}
	if err != nil {
		return hq.Identity{}, false, err
	}
	id := hq.Identity{Operator: r.Operator, Role: hq.Role(r.Role), TokenID: r.TokenID, SignIn: r.Via}
	if r.TokenID != 0 {
		id.Role, id.Modules, id.Nodes = hq.Role(r.BoundRole), r.Modules, r.Nodes
	}
	return id, true, nil
}

// DeleteSession ends a session at once: its secret is refused from now on. Ending one that
// does not exist is not an error, so signing out twice is harmless.
func (s *Store) DeleteSession(ctx context.Context, secret string) error {
	return s.inTx(ctx, func(q driver.Queries) error {
		return q.WebSessionDelete(ctx, hashToken(secret))
	})
}

// SessionValid reports whether secret belongs to a session that has not ended or expired.
func (s *Store) SessionValid(ctx context.Context, secret string) (bool, error) {
	_, ok, err := s.Session(ctx, secret)
	return ok, err
}

// signIn is the via a session row keeps: how it was opened, the token form unless said.
func signIn(via string) string {
	if via == "" {
		return hq.SignInToken
	}
	return via
}
