package db

import (
	"context"
	"database/sql"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/db/internal/dbsqlc"
)

// recordDrifts keeps every put-back the report names, with what differed, in the report's
// transaction: drift leaves the resource applied, so no transition would ever say it happened.
func recordDrifts(ctx context.Context, q dbsqlc.Querier, node string, reportID int64, results []hq.Result, at string) error {
	for _, r := range results {
		if !r.Drift {
			continue
		}
		if err := q.DriftInsert(ctx, dbsqlc.DriftInsertParams{Node: node, Module: r.Module, Resource: r.Resource, At: at,
			ReportID: sql.NullInt64{Int64: reportID, Valid: true}, Detail: r.DriftDetail}); err != nil {
			return err
		}
	}
	return nil
}

func hasDrift(results []hq.Result) bool {
	for _, r := range results {
		if r.Drift {
			return true
		}
	}
	return false
}
