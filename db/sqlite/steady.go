package sqlite

import (
	"context"

	"github.com/meshhq/hq/db/driver"
	"github.com/meshhq/hq/db/sqlite/internal/sqlitesqlc"
)

func (q queries) ReportSteadyContext(ctx context.Context, arg driver.ReportSteadyContextParams) (driver.ReportSteadyContextRow, error) {
	r, err := q.q.ReportSteadyContext(ctx, sqlitesqlc.ReportSteadyContextParams{Node: arg.Node, SendID: arg.SendID,
		Generation: arg.Generation, Digest: arg.Digest, Signature: arg.Signature, Results: arg.Results})
	return driver.ReportSteadyContextRow(r), err
}
