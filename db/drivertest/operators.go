package drivertest

import (
	"database/sql"
	"strconv"
	"strings"
	"time"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/db"
	"github.com/meshhq/hq/internal/testdb"
)

// operators: an operator's binding and tokens, revoked and expired, the page sessions opened
// with them, and the authors the store records from the request's identity.
func operators(a *area) {
	s := a.s
	_, err := s.AddOperator(a.ctx, hq.Operator{Name: "vera", Role: hq.RoleViewer, Modules: "web-*"}, nil)
	a.refused("a bounded viewer", err, hq.CodeInvalid)
	_, err = s.AddOperator(a.ctx, hq.Operator{Name: "x", Role: "root"}, nil)
	a.refused("a role that is none", err, hq.CodeInvalid)
	_, err = s.AddOperator(a.ctx, hq.Operator{Name: "dan", Role: hq.RoleDeployer, Nodes: "team in (web"}, nil)
	a.refused("a bad selector", err, hq.CodeInvalid)

	tok, err := s.AddOperator(a.ctx, hq.Operator{Name: "dan", Role: hq.RoleDeployer, Modules: "web-*", Nodes: "team=web"}, nil)
	a.ok("add dan", err)
	a.is("a token is an operator token", strings.HasPrefix(tok.Token, "hqo_"), true)
	_, err = s.AddOperator(a.ctx, hq.Operator{Name: "dan", Role: hq.RoleAdmin}, nil)
	a.refused("dan again", err, hq.CodeConflict)
	c, err := s.CheckOperatorToken(a.ctx, tok.Token)
	a.ok("check", err)
	a.is("dan's token", c.Identity, hq.Identity{Operator: "dan", Role: hq.RoleDeployer, Modules: "web-*", Nodes: "team=web", TokenID: tok.ID})
	a.is("valid", c.Valid, true)
	dan := c.Identity
	c, err = s.CheckOperatorToken(a.ctx, "hqo_nobody")
	a.ok("check nobody's", err)
	a.is("nobody's token", c.Known, false)

	later := a.c.Now().Add(time.Hour)
	short, err := s.NewOperatorToken(a.ctx, "dan", &later)
	a.ok("a token for an hour", err)
	who := dan
	who.TokenID = short.ID
	a.ok("a session with it", s.CreateSession(a.ctx, "page", a.c.Now().Add(12*time.Hour), who))
	id, open, err := s.Session(a.ctx, "page")
	a.ok("session", err)
	a.is("the session is dan's binding", []any{open, id.Operator, id.Role, id.Modules}, []any{true, "dan", hq.RoleDeployer, "web-*"})
	a.c.Advance(2 * time.Hour)
	c, err = s.CheckOperatorToken(a.ctx, short.Token)
	a.ok("check expired", err)
	a.is("an expired token", []any{c.Known, c.Valid, c.Why}, []any{true, false, "this token expired"})
	_, open, err = s.Session(a.ctx, "page")
	a.ok("session of an expired token", err)
	a.is("the session ends with its token", open, false)

	a.ok("revoke the first token", s.RevokeOperatorToken(a.ctx, tok.ID))
	a.refused("revoke it again", s.RevokeOperatorToken(a.ctx, tok.ID), hq.CodeNotFound)
	c, _ = s.CheckOperatorToken(a.ctx, tok.Token)
	a.is("a revoked token", c.Why, "this token is revoked")
	third, err := s.NewOperatorToken(a.ctx, "dan", nil)
	a.ok("a third token", err)
	a.ok("revoke dan", s.RevokeOperator(a.ctx, "dan"))
	c, _ = s.CheckOperatorToken(a.ctx, third.Token)
	a.is("a revoked operator's token", c.Why, "operator dan is revoked")
	_, err = s.NewOperatorToken(a.ctx, "dan", nil)
	a.refused("a token for a revoked operator", err, hq.CodeConflict)
	list, err := s.ListOperators(a.ctx)
	a.ok("list", err)
	a.is("dan is listed, revoked, with three tokens", []any{len(list), list[0].RevokedAt != nil, len(list[0].Tokens)}, []any{1, true, 3})
	n, err := s.Admins(a.ctx)
	a.ok("admins", err)
	a.is("no admin", n, int64(0))

	// Authorship comes from the request's identity.
	ctx := hq.WithIdentity(a.ctx, hq.Identity{Operator: "alice", Role: hq.RoleAdmin})
	res, err := s.PushModule(ctx, "web-app", []hq.Resource{{Name: "a", Kind: hq.KindFile, Path: "/a", Content: "a"}}, "first cut")
	a.ok("push", err)
	rev, err := s.GetRevision(a.ctx, "web-app", res.Revision)
	a.ok("revision", err)
	a.is("who pushed it, and why", []string{rev.PushedBy, rev.Message}, []string{"alice", "first cut"})
	page, err := s.PageRevisions(a.ctx, "web-app", 0, 10)
	a.ok("revisions", err)
	a.is("the page of revisions says so too", []string{page.Revisions[0].PushedBy, page.Revisions[0].Message}, []string{"alice", "first cut"})
}

// audit: the log is appended to, read back newest first by filter and page, refuses UPDATE
// and DELETE in SQL, and loses rows only to its prune.
func audit(a *area) {
	s := a.s
	for i, e := range []hq.AuditEntry{
		{Operator: "alice", Role: hq.RoleAdmin, Via: hq.ViaCLI, Source: "10.0.0.1", Action: "operator.add", Object: "operator/dan", Outcome: 201},
		{Operator: "dan", Role: hq.RoleDeployer, Via: hq.ViaAPI, Source: "10.0.0.2", Action: "module.push", Object: "module/web-app", Result: 1, Outcome: 201, Detail: "first cut"},
		{Operator: "dan", Role: hq.RoleDeployer, Via: hq.ViaPage, Source: "10.0.0.2", Action: "module.push", Object: "module/db", Outcome: 403, Detail: "dan may change modules web-* only"},
	} {
		a.ok("append", s.Audit(a.ctx, e))
		if i == 0 {
			a.c.Advance(time.Hour)
		}
	}
	p, err := s.ListAudit(a.ctx, db.AuditFilter{})
	a.ok("list", err)
	a.is("newest first", actions(p.Entries), []string{"module.push module/db 403", "module.push module/web-app 201", "operator.add operator/dan 201"})
	a.is("a row read back", []any{p.Entries[1].Operator, p.Entries[1].Role, p.Entries[1].Via, p.Entries[1].Result, p.Entries[1].Detail},
		[]any{"dan", hq.RoleDeployer, "api", int64(1), "first cut"})
	p, err = s.ListAudit(a.ctx, db.AuditFilter{Operator: "dan", Limit: 1})
	a.ok("a page of dan's", err)
	a.is("the first page", actions(p.Entries), []string{"module.push module/db 403"})
	p, err = s.ListAudit(a.ctx, db.AuditFilter{Operator: "dan", Before: p.Next, Limit: 1})
	a.ok("the next page", err)
	a.is("the next page", actions(p.Entries), []string{"module.push module/web-app 201"})
	p, err = s.ListAudit(a.ctx, db.AuditFilter{Object: "operator/dan"})
	a.ok("by object", err)
	a.is("by object", actions(p.Entries), []string{"operator.add operator/dan 201"})
	p, err = s.ListAudit(a.ctx, db.AuditFilter{Action: "module.push", Since: a.c.Now().Add(-time.Minute)})
	a.ok("by action, since", err)
	a.is("by action, since", len(p.Entries), 2)

	raw, err := sql.Open(testdb.Driver(a.dsn), rawDSN(a.dsn))
	a.ok("open raw", err)
	defer raw.Close()
	_, err = raw.ExecContext(a.ctx, `UPDATE audit_log SET outcome = 200`)
	a.is("UPDATE is refused", err != nil && strings.Contains(err.Error(), "append-only"), true)
	_, err = raw.ExecContext(a.ctx, `DELETE FROM audit_log`)
	a.is("DELETE is refused", err != nil && strings.Contains(err.Error(), "append-only"), true)

	n, err := s.PruneAudit(a.ctx, 30*time.Minute, 1)
	a.ok("prune", err)
	a.is("the entry older than the cutoff is pruned", n, int64(1))
	p, _ = s.ListAudit(a.ctx, db.AuditFilter{})
	a.is("what is left", len(p.Entries), 2)
	_, err = raw.ExecContext(a.ctx, `DELETE FROM audit_log`)
	a.is("DELETE is refused again after a prune", err != nil && strings.Contains(err.Error(), "append-only"), true)
}

func rawDSN(hqDB string) string {
	if testdb.Driver(hqDB) == "sqlite" {
		return "file:" + hqDB + "?_pragma=busy_timeout(5000)"
	}
	return hqDB
}

func actions(es []hq.AuditEntry) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.Action + " " + e.Object + " " + strconv.Itoa(e.Outcome)
	}
	return out
}
