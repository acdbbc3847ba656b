package client

import (
	"context"
	"net/url"
	"strconv"

	"github.com/meshhq/hq"
)

// PutPlacement puts a module on every node a selector matches, now and later.
func (c *Client) PutPlacement(ctx context.Context, p hq.Placement) (hq.Placement, error) {
	body := struct {
		Module   string            `json:"module"`
		Selector string            `json:"selector"`
		Taken    bool              `json:"taken"`
		Rollout  *hq.RolloutPolicy `json:"rollout,omitempty"`
	}{p.Module, p.Selector, p.Taken, p.Rollout}
	var out hq.Placement
	return out, c.Do(ctx, "PUT", "/placements/"+url.PathEscape(p.Name), body, &out)
}

// Placements lists every placement.
func (c *Client) Placements(ctx context.Context) ([]hq.Placement, error) {
	var out struct {
		Placements []hq.Placement `json:"placements"`
	}
	return out.Placements, c.Do(ctx, "GET", "/placements", nil, &out)
}

// DeletePlacement takes a placement's module off the nodes it put it on.
func (c *Client) DeletePlacement(ctx context.Context, name string) error {
	return c.Do(ctx, "DELETE", "/placements/"+url.PathEscape(name), nil, nil)
}

// Rollouts lists the rollouts, newest first.
func (c *Client) Rollouts(ctx context.Context) ([]hq.Rollout, error) {
	var out struct {
		Rollouts []hq.Rollout `json:"rollouts"`
	}
	return out.Rollouts, c.Do(ctx, "GET", "/rollouts", nil, &out)
}

// Rollout reads one rollout with its per-node progress; verb "" reads it, "pause", "resume",
// "promote" or "abort" acts on it first.
func (c *Client) Rollout(ctx context.Context, id int64, verb string) (hq.Rollout, error) {
	path, method := "/rollouts/"+strconv.FormatInt(id, 10), "GET"
	if verb != "" {
		path, method = path+"/"+verb, "POST"
	}
	var out hq.Rollout
	return out, c.Do(ctx, method, path, nil, &out)
}

// RollbackPlacement starts a rollout of a placement's nodes back to an earlier revision.
func (c *Client) RollbackPlacement(ctx context.Context, placement string, revision int64) (hq.Rollout, error) {
	var out hq.Rollout
	return out, c.Do(ctx, "POST", "/placements/"+url.PathEscape(placement)+"/rollback", map[string]int64{"revision": revision}, &out)
}
