package db

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/db/driver"
)

// recordContainers writes what a report says runs for each container resource of the node's
// declaration. The statement leaves a row that says the same as it is, and a report that
// repeats the node's last one does not come here: its outcome digest holds the statuses, so
// they are what was written before.
func recordContainers(ctx context.Context, q driver.Queries, node string, reportID int64, results []hq.Result, at string) error {
	for _, r := range results {
		c := r.Container
		if c == nil {
			continue
		}
		if err := q.ContainerStatusRecord(ctx, driver.ContainerStatusRecordParams{
			ContainerID: c.ID, ImageDigest: c.ImageDigest, StartedAt: optTime(c.StartedAt), Restarts: c.Restarts,
			Health: c.Health, SpecDigest: c.Spec, EarlierSpec: driver.Flag(c.EarlierSpec), Since: at,
			ReportID: sql.NullInt64{Int64: reportID, Valid: true}, Node: node, Module: r.Module, Resource: r.Resource,
		}); err != nil {
			return fmt.Errorf("%s/%s: %w", r.Module, r.Resource, err)
		}
	}
	return nil
}

// containerView is a stored container status as the API shows it.
func containerView(c driver.ContainerStatus) *hq.ContainerStatus {
	v := &hq.ContainerStatus{ID: c.ContainerID, ImageDigest: c.ImageDigest, Restarts: c.Restarts, Health: c.Health,
		Spec: c.SpecDigest, EarlierSpec: c.EarlierSpec != 0}
	if c.StartedAt.Valid {
		v.StartedAt = hq.ParseTime(c.StartedAt.String)
	}
	return v
}

// addContainers puts on node's resources what runs for each container among them.
func addContainers(ctx context.Context, q driver.Queries, node string, resources []hq.ResourceView) error {
	cs, err := q.ContainerStatusListByNode(ctx, node)
	if err != nil || len(cs) == 0 {
		return err
	}
	byRef := make(map[[2]string]driver.ContainerStatus, len(cs))
	for _, c := range cs {
		byRef[[2]string{c.Module, c.Resource}] = c
	}
	for i := range resources {
		if c, ok := byRef[[2]string{resources[i].Module, resources[i].Resource}]; ok {
			resources[i].Container = containerView(c)
		}
	}
	return nil
}
