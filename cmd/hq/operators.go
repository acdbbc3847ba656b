package main

import (
	"context"
	"flag"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/client"
	"github.com/meshhq/hq/db"
)

// operatorFlags are hq operator's: the binding of a new operator, a token's lifetime, which
// token to revoke, and --db to work on HQ_DB directly (the first admin, before the API has
// one).
type operatorFlags struct {
	role, modules, nodes, expires string
	token                         int64
	direct                        bool
}

func addOperatorFlags(fs *flag.FlagSet, o *cliRun) {
	f := &o.operator
	fs.StringVar(&f.role, "role", "", "add: viewer, deployer or admin")
	fs.StringVar(&f.modules, "modules", "", "add: a deployer may change only the modules this glob matches (web-*)")
	fs.StringVar(&f.nodes, "nodes", "", "add: a deployer may change only the nodes this label selector matches (team=web)")
	fs.StringVar(&f.expires, "expires", "", "add, token: the token expires after this long (720h); never when unset")
	fs.Int64Var(&f.token, "token", 0, "revoke: the one token with this id, not the whole operator")
	fs.BoolVar(&f.direct, "db", false, "work on the database HQ_DB names directly instead of through the API: for the first admin")
}

// cmdOperator is hq operator add|list|revoke|token.
func cmdOperator(ctx context.Context, o *cliRun, args []string) error {
	if len(args) == 0 {
		return usageError("want add, list, revoke or token")
	}
	if !o.operator.direct {
		return runOperatorVerb(ctx, o, args, operatorOps(o.c), nil)
	}
	s, err := openDirect(ctx, o.getenv)
	if err != nil {
		return err
	}
	defer s.Close()
	// What is done here is audited as the API audits it, as "local": whoever can open HQ_DB.
	ctx = hq.WithIdentity(ctx, hq.Identity{Operator: "local", Role: hq.RoleAdmin, Via: hq.ViaCLI, Source: "HQ_DB"})
	return runOperatorVerb(ctx, o, args, directOps(s), s)
}

// operatorOpsT is what hq operator does, through the API or on the database.
type operatorOpsT struct {
	add    func(ctx context.Context, op client.NewOperator) (hq.NewToken, error)
	list   func(ctx context.Context) ([]hq.Operator, error)
	revoke func(ctx context.Context, name string) error
	drop   func(ctx context.Context, id int64) error
	token  func(ctx context.Context, name, expires string) (hq.NewToken, error)
}

func operatorOps(c *client.Client) operatorOpsT {
	return operatorOpsT{add: c.AddOperator, list: c.Operators, revoke: c.RevokeOperator, drop: c.RevokeToken, token: c.OperatorToken}
}

func directOps(s *db.Store) operatorOpsT {
	return operatorOpsT{
		add: func(ctx context.Context, op client.NewOperator) (hq.NewToken, error) {
			exp, err := expiresAt(op.Expires)
			if err != nil {
				return hq.NewToken{}, err
			}
			return s.AddOperator(ctx, hq.Operator{Name: op.Name, Role: op.Role, Modules: op.Modules, Nodes: op.Nodes}, exp)
		},
		list:   s.ListOperators,
		revoke: s.RevokeOperator,
		drop:   s.RevokeOperatorToken,
		token: func(ctx context.Context, name, expires string) (hq.NewToken, error) {
			exp, err := expiresAt(expires)
			if err != nil {
				return hq.NewToken{}, err
			}
			return s.NewOperatorToken(ctx, name, exp)
		},
	}
}

func expiresAt(v string) (*time.Time, error) {
	if v == "" {
		return nil, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return nil, fmt.Errorf("--expires is a positive duration such as 720h, not %q", v)
	}
	t := time.Now().Add(d)
	return &t, nil
}

// openDirect opens HQ_DB (./hq.db by default), as hq migrate does.
func openDirect(ctx context.Context, getenv func(string) string) (*db.Store, error) {
	path := getenv("HQ_DB")
	if path == "" {
		path = "./hq.db"
	}
	return db.Open(ctx, path, db.Options{})
}

func runOperatorVerb(ctx context.Context, o *cliRun, args []string, ops operatorOpsT, direct *db.Store) error {
	f := o.operator
	switch verb := args[0]; {
	case verb == "add":
		if err := wantArgs(args[1:], 1, "add NAME --role R"); err != nil {
			return err
		}
		tok, err := ops.add(ctx, client.NewOperator{Name: args[1], Role: hq.Role(f.role), Modules: f.modules, Nodes: f.nodes, Expires: f.expires})
		if err != nil {
			return err
		}
		audited(ctx, direct, "operator.add", "operator/"+args[1], tok.ID)
		return o.print(tok, func() []string { return tokenLines(tok) })
	case verb == "token":
		if err := wantArgs(args[1:], 1, "token NAME"); err != nil {
			return err
		}
		tok, err := ops.token(ctx, args[1], f.expires)
		if err != nil {
			return err
		}
		audited(ctx, direct, "operator.token", "operator/"+args[1], tok.ID)
		return o.print(tok, func() []string { return tokenLines(tok) })
	case verb == "revoke" && f.token > 0:
		if err := wantArgs(args[1:], 0, "revoke --token ID"); err != nil {
			return err
		}
		if err := ops.drop(ctx, f.token); err != nil {
			return err
		}
		audited(ctx, direct, "operator.token.revoke", "token/"+strconv.FormatInt(f.token, 10), 0)
		return o.print(map[string]int64{"revoked_token": f.token}, func() []string { return []string{fmt.Sprintf("token %d revoked", f.token)} })
	case verb == "revoke":
		if err := wantArgs(args[1:], 1, "revoke NAME|--token ID"); err != nil {
			return err
		}
		if err := ops.revoke(ctx, args[1]); err != nil {
			return err
		}
		audited(ctx, direct, "operator.revoke", "operator/"+args[1], 0)
		return o.print(map[string]string{"revoked": args[1]}, func() []string { return []string{args[1] + " revoked, with every token of theirs"} })
	case verb == "list":
		list, err := ops.list(ctx)
		if err != nil {
			return err
		}
		return o.print(map[string][]hq.Operator{"operators": list}, func() []string { return operatorLines(list) })
	}
	return usageError("want add, list, revoke or token, not " + args[0])
}

// audited writes the audit entry the API would, for a change made on the database directly.
func audited(ctx context.Context, s *db.Store, action, object string, result int64) {
	if s == nil {
		return
	}
	id, _ := hq.IdentityFrom(ctx)
	_ = s.Audit(ctx, hq.AuditEntry{Operator: id.Operator, Role: id.Role, Via: id.Via, Source: id.Source,
		Action: action, Object: object, Result: result, Outcome: 200, Detail: "on HQ_DB directly"})
}

func tokenLines(t hq.NewToken) []string {
	exp := "never expires"
	if t.ExpiresAt != nil {
		exp = "expires " + t.ExpiresAt.UTC().Format(time.RFC3339)
	}
	return []string{t.Token, fmt.Sprintf("# token %d of %s, %s: shown this once, kept only as a hash", t.ID, t.Operator, exp)}
}

func operatorLines(list []hq.Operator) []string {
	var lines []string
	for _, op := range list {
		l := fmt.Sprintf("%s  %s", op.Name, op.Role)
		if op.Modules != "" {
			l += "  modules " + op.Modules
		}
		if op.Nodes != "" {
			l += "  nodes " + op.Nodes
		}
		if op.RevokedAt != nil {
			l += "  revoked " + op.RevokedAt.UTC().Format(time.RFC3339)
		}
		var toks []string
		for _, t := range op.Tokens {
			s := "#" + strconv.FormatInt(t.ID, 10)
			switch {
			case t.RevokedAt != nil:
				s += " revoked"
			case t.ExpiresAt != nil:
				s += " until " + t.ExpiresAt.UTC().Format(time.RFC3339)
			}
			toks = append(toks, s)
		}
		if len(toks) > 0 {
			l += "  tokens " + strings.Join(toks, ", ")
		}
		lines = append(lines, l)
	}
	if len(lines) == 0 {
		lines = []string{"no operator yet (HQ_ADMIN_TOKEN is the bootstrap admin): hq operator add NAME --role admin"}
	}
	return lines
}

func auditFlags(fs *flag.FlagSet, o *cliRun) {
	q := &o.audit
	fs.StringVar(&q.Operator, "operator", "", "only this operator's entries")
	fs.StringVar(&q.Object, "object", "", "only entries about this object (module/web-app, rollout/3)")
	fs.StringVar(&q.Action, "action", "", "only this action (module.push, rollout.pause)")
	fs.StringVar(&q.Since, "since", "", "only entries since this long ago (24h) or this time (RFC 3339)")
	fs.IntVar(&q.Limit, "limit", 50, "at most this many entries, newest first")
	fs.Int64Var(&q.Before, "before", 0, "the entries older than this id (the next page)")
}

// cmdAudit is hq audit: the audit log, newest first.
func cmdAudit(ctx context.Context, o *cliRun, args []string) error {
	if err := wantArgs(args, 0, ""); err != nil {
		return err
	}
	page, err := o.c.Audit(ctx, o.audit)
	if err != nil {
		return err
	}
	return o.print(page, func() []string {
		lines := make([]string, 0, len(page.Entries)+1)
		for _, e := range page.Entries {
			l := fmt.Sprintf("%d  %s  %s (%s) via %s from %s  %s %s  %d", e.ID, e.At.UTC().Format(time.RFC3339),
				e.Operator, e.Role, e.Via, e.Source, e.Action, e.Object, e.Outcome)
			if e.Result != 0 {
				l += fmt.Sprintf("  → %d", e.Result)
			}
			if e.Detail != "" {
				l += "  " + e.Detail
			}
			lines = append(lines, l)
		}
		if page.Next != 0 {
			lines = append(lines, fmt.Sprintf("# more: hq audit --before %d", page.Next))
		}
		return lines
	})
}
