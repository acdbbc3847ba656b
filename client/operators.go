package client

import (
	"context"
	"net/url"
	"strconv"

	"github.com/meshhq/hq"
)

type headersKey struct{}

// withHeader returns ctx asking the request made with it to carry header k: v.
func withHeader(ctx context.Context, k, v string) context.Context {
	h := map[string]string{}
	for hk, hv := range headersFrom(ctx) {
		h[hk] = hv
	}
	h[k] = v
	return context.WithValue(ctx, headersKey{}, h)
}

func headersFrom(ctx context.Context) map[string]string {
	h, _ := ctx.Value(headersKey{}).(map[string]string)
	return h
}

// PushModule uploads a new revision of a module with a message saying what it is for (sent
// as X-HQ-Message; "" sends none).
func (c *Client) PushModule(ctx context.Context, name string, resources []hq.Resource, message string) (PutResult, error) {
	if message != "" {
		ctx = withHeader(ctx, "X-HQ-Message", message)
	}
	return c.PutModule(ctx, name, resources)
}

// NewOperator is what POST /operators takes.
type NewOperator struct {
	Name    string  `json:"name"`
	Role    hq.Role `json:"role"`
	Modules string  `json:"modules,omitempty"`
	Nodes   string  `json:"nodes,omitempty"`
	Expires string  `json:"expires,omitempty"`
}

// AddOperator adds an operator and returns its first token, shown this once.
func (c *Client) AddOperator(ctx context.Context, op NewOperator) (hq.NewToken, error) {
	var t hq.NewToken
	return t, c.Do(ctx, "POST", "/operators", op, &t)
}

// Operators lists every operator with its tokens (never their text).
func (c *Client) Operators(ctx context.Context) ([]hq.Operator, error) {
	var r struct {
		Operators []hq.Operator `json:"operators"`
	}
	return r.Operators, c.Do(ctx, "GET", "/operators", nil, &r)
}

// OperatorToken makes another token for an operator; expires is a duration ("" never).
func (c *Client) OperatorToken(ctx context.Context, name, expires string) (hq.NewToken, error) {
	var t hq.NewToken
	return t, c.Do(ctx, "POST", "/operators/"+url.PathEscape(name)+"/tokens", map[string]string{"expires": expires}, &t)
}

// RevokeOperator ends an operator and all its tokens.
func (c *Client) RevokeOperator(ctx context.Context, name string) error {
	return c.Do(ctx, "DELETE", "/operators/"+url.PathEscape(name), nil, nil)
}

// RevokeToken ends one operator token, by its id.
func (c *Client) RevokeToken(ctx context.Context, id int64) error {
	return c.Do(ctx, "DELETE", "/operator-tokens/"+strconv.FormatInt(id, 10), nil, nil)
}

// AuditQuery filters and pages GET /audit; each field empty for any.
type AuditQuery struct {
	Operator, Object, Action, Since string
	Before                          int64
	Limit                           int
}

// AuditPage is one page of the audit log, newest first.
type AuditPage struct {
	Entries []hq.AuditEntry `json:"entries"`
	Next    int64           `json:"next"`
}

// Audit reads one page of the audit log.
func (c *Client) Audit(ctx context.Context, q AuditQuery) (AuditPage, error) {
	v := url.Values{}
	for k, s := range map[string]string{"operator": q.Operator, "object": q.Object, "action": q.Action, "since": q.Since} {
		if s != "" {
			v.Set(k, s)
		}
	}
	if q.Before > 0 {
		v.Set("before", strconv.FormatInt(q.Before, 10))
	}
	if q.Limit > 0 {
		v.Set("limit", strconv.Itoa(q.Limit))
	}
	path := "/audit"
	if len(v) > 0 {
		path += "?" + v.Encode()
	}
	var p AuditPage
	return p, c.Do(ctx, "GET", path, nil, &p)
}
