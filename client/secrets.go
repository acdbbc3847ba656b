package client

import (
	"context"
	"encoding/base64"
	"strings"

	"github.com/meshhq/hq"
)

// SecretPut is what a new version of a secret did: the secret as it is now, and the new
// revision of each module that uses it.
type SecretPut struct {
	Secret  hq.SecretView     `json:"secret"`
	Modules map[string]int64  `json:"modules"`
	Errors  map[string]string `json:"errors,omitempty"`
}

// SecretPlan is what a new version would move: the plan of each module that uses it.
type SecretPlan struct {
	Secret  string          `json:"secret"`
	Version int64           `json:"version"`
	Modules []hq.ModulePlan `json:"modules"`
}

// secretPath is the API path of the secret name, whose '/' stay as they are.
func secretPath(name string) string { return "/secrets/" + name }

// PutSecret stores value as a new version of the secret name. It is sent base64, so any
// bytes are kept as they are.
func (c *Client) PutSecret(ctx context.Context, name string, value []byte) (SecretPut, error) {
	var r SecretPut
	return r, c.Do(ctx, "PUT", secretPath(name), map[string]string{"value_base64": base64.StdEncoding.EncodeToString(value)}, &r)
}

// PlanSecret asks what a new version of name would move; nothing is written, and no value
// is sent.
func (c *Client) PlanSecret(ctx context.Context, name string) (SecretPlan, error) {
	var p SecretPlan
	return p, c.Do(ctx, "PUT", secretPath(name)+"?dry_run=true", map[string]string{"value": "-"}, &p)
}

// Secrets lists every secret, without values.
func (c *Client) Secrets(ctx context.Context) ([]hq.SecretView, error) {
	var r struct {
		Secrets []hq.SecretView `json:"secrets"`
	}
	return r.Secrets, c.Do(ctx, "GET", "/secrets", nil, &r)
}

// Secret is one secret and its versions, without values.
func (c *Client) Secret(ctx context.Context, name string) (hq.SecretView, error) {
	var v hq.SecretView
	return v, c.Do(ctx, "GET", secretPath(strings.TrimPrefix(name, "/")), nil, &v)
}

// DeleteSecret deletes a secret no module uses.
func (c *Client) DeleteSecret(ctx context.Context, name string) error {
	return c.Do(ctx, "DELETE", secretPath(name), nil, nil)
}
