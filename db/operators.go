package db

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"database/sql"
	"errors"
	"path"
	"time"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/db/driver"
	"github.com/meshhq/hq/selector"
)

// operatorTokenPrefix starts every operator token, so one found in a log or a paste is known
// for what it is.
const operatorTokenPrefix = "hqo_"

// AddOperator adds an operator with its binding and makes its first token, which expires at
// expires (nil: never). Only a deployer may be bounded to modules or nodes: a viewer changes
// nothing, and an admin bounded would still manage the operators that bound it.
func (s *Store) AddOperator(ctx context.Context, op hq.Operator, expires *time.Time) (hq.NewToken, error) {
	if err := validBinding(op); err != nil {
		return hq.NewToken{}, err
	}
	var tok hq.NewToken
	err := s.inTx(ctx, func(q driver.Queries) error {
		switch _, err := q.OperatorGet(ctx, op.Name); {
		case err == nil:
			return hq.Errorf(hq.CodeConflict, "there is an operator %s already (a revoked one keeps its name, for the audit log)", op.Name)
		case !errors.Is(err, sql.ErrNoRows):
			return err
		}
		if err := q.OperatorInsert(ctx, driver.OperatorInsertParams{Name: op.Name, Role: string(op.Role), Modules: op.Modules,
			Nodes: op.Nodes, CreatedAt: s.now(), CreatedBy: hq.Author(ctx)}); err != nil {
			return err
		}
		var err error
		tok, err = s.insertToken(ctx, q, op.Name, expires)
		return err
	})
	return tok, err
}

func validBinding(op hq.Operator) error {
	if !hq.ValidName(op.Name) {
		return hq.NameError("operator", op.Name)
	}
	if !op.Role.Valid() {
		return hq.Errorf(hq.CodeInvalid, "role %q is none of viewer, deployer, admin", op.Role)
	}
	if (op.Modules != "" || op.Nodes != "") && op.Role != hq.RoleDeployer {
		return hq.Errorf(hq.CodeInvalid, "only a deployer's binding is bounded to modules or nodes, not a %s's", op.Role)
	}
	if _, err := path.Match(op.Modules, ""); err != nil {
		return hq.Errorf(hq.CodeInvalid, "modules %q is not a glob pattern: %v", op.Modules, err)
	}
	if op.Nodes != "" {
		if _, err := selector.Parse(op.Nodes); err != nil {
			return hq.Errorf(hq.CodeInvalid, "nodes %q is not a label selector: %v", op.Nodes, err)
		}
	}
	return nil
}

// NewOperatorToken makes another token for an operator that is not revoked.
func (s *Store) NewOperatorToken(ctx context.Context, name string, expires *time.Time) (hq.NewToken, error) {
	var tok hq.NewToken
	err := s.inTx(ctx, func(q driver.Queries) error {
		op, err := q.OperatorGet(ctx, name)
		if err != nil {
			return notFound(err, "no operator %s", name)
		}
		if op.RevokedAt.Valid {
			return hq.Errorf(hq.CodeConflict, "operator %s is revoked", name)
		}
		tok, err = s.insertToken(ctx, q, name, expires)
		return err
	})
	return tok, err
}

func (s *Store) insertToken(ctx context.Context, q driver.Queries, name string, expires *time.Time) (hq.NewToken, error) {
	if expires != nil && !expires.After(s.clock()) {
		return hq.NewToken{}, hq.Errorf(hq.CodeInvalid, "a token's expiry must be in the future")
	}
	token := operatorTokenPrefix + rand.Text()
	exp := sql.NullString{}
	if expires != nil {
		exp = sql.NullString{String: hq.FormatTime(*expires), Valid: true}
	}
	id, err := q.OperatorTokenInsert(ctx, driver.OperatorTokenInsertParams{Operator: name, TokenHash: hashToken(token),
		CreatedAt: s.now(), ExpiresAt: exp})
	return hq.NewToken{Operator: name, ID: id, Token: token, ExpiresAt: nullTime(exp)}, err
}

// RevokeOperator ends an operator and every one of its tokens at once; its name stays.
func (s *Store) RevokeOperator(ctx context.Context, name string) error {
	return s.inTx(ctx, func(q driver.Queries) error {
		now := sql.NullString{String: s.now(), Valid: true}
		n, err := q.OperatorRevoke(ctx, driver.OperatorRevokeParams{Now: now, Name: name})
		if err != nil {
			return err
		}
		if n == 0 {
			if _, err := q.OperatorGet(ctx, name); err != nil {
				return notFound(err, "no operator %s", name)
			}
			return hq.Errorf(hq.CodeConflict, "operator %s is revoked already", name)
		}
		return q.OperatorTokenRevokeAll(ctx, driver.OperatorTokenRevokeAllParams{Now: now, Operator: name})
	})
}

// RevokeOperatorToken ends one token at once.
func (s *Store) RevokeOperatorToken(ctx context.Context, id int64) error {
	return s.inTx(ctx, func(q driver.Queries) error {
		n, err := q.OperatorTokenRevoke(ctx, driver.OperatorTokenRevokeParams{Now: sql.NullString{String: s.now(), Valid: true}, ID: id})
		if err == nil && n == 0 {
			err = hq.Errorf(hq.CodeNotFound, "no token %d that is not revoked", id)
		}
		return err
	})
}

// ListOperators returns every operator, revoked ones too, with its tokens.
func (s *Store) ListOperators(ctx context.Context) ([]hq.Operator, error) {
	q := s.reader()
	rows, err := q.OperatorList(ctx)
	if err != nil {
		return nil, err
	}
	tokens, err := q.OperatorTokenList(ctx)
	if err != nil {
		return nil, err
	}
	by := map[string][]hq.OperatorToken{}
	for _, t := range tokens {
		by[t.Operator] = append(by[t.Operator], hq.OperatorToken{ID: t.ID, CreatedAt: hq.ParseTime(t.CreatedAt),
			ExpiresAt: nullTime(t.ExpiresAt), RevokedAt: nullTime(t.RevokedAt)})
	}
	ops := make([]hq.Operator, 0, len(rows))
	for _, r := range rows {
		ops = append(ops, hq.Operator{Name: r.Name, Role: hq.Role(r.Role), Modules: r.Modules, Nodes: r.Nodes,
			CreatedAt: hq.ParseTime(r.CreatedAt), CreatedBy: r.CreatedBy, RevokedAt: nullTime(r.RevokedAt), Tokens: by[r.Name]})
	}
	return ops, nil
}

// Admins is how many admins there are that are not revoked: once there is one, HQ_ADMIN_TOKEN
// may be retired.
func (s *Store) Admins(ctx context.Context) (int64, error) {
	return s.reader().OperatorAdminCount(ctx)
}

// OperatorCheck is what an operator token was found to be. Known: it is some operator's
// token, named by Identity.Operator; Valid: it may be used now; otherwise Why says why not.
type OperatorCheck struct {
	Known    bool
	Valid    bool
	Why      string
	Identity hq.Identity
}

// CheckOperatorToken finds whose token this is and whether it is good now: neither it nor its
// operator revoked, and not expired.
func (s *Store) CheckOperatorToken(ctx context.Context, token string) (OperatorCheck, error) {
	h := hashToken(token)
	r, err := s.reader().OperatorTokenCheck(ctx, h)
	if errors.Is(err, sql.ErrNoRows) {
		return OperatorCheck{}, nil
	}
	if err != nil {
		return OperatorCheck{}, err
	}
	// The index found the row by the hash; compare it again without a timing of its own.
	if subtle.ConstantTimeCompare([]byte(r.TokenHash), []byte(h)) != 1 {
		return OperatorCheck{}, nil
	}
	c := OperatorCheck{Known: true, Identity: hq.Identity{Operator: r.Name, Role: hq.Role(r.Role), Modules: r.Modules,
		Nodes: r.Nodes, TokenID: r.ID}}
	now := s.now()
	switch {
	case r.OperatorRevokedAt.Valid:
		c.Why = "operator " + r.Name + " is revoked"
	case r.RevokedAt.Valid:
		c.Why = "this token is revoked"
	case r.ExpiresAt.Valid && r.ExpiresAt.String <= now:
		c.Why = "this token expired"
	default:
		c.Valid = true
	}
	return c, nil
}
