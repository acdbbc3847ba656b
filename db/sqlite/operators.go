package sqlite

import (
	"context"

	"github.com/meshhq/hq/db/driver"
	"github.com/meshhq/hq/db/sqlite/internal/sqlitesqlc"
)

func (q queries) OperatorInsert(ctx context.Context, arg driver.OperatorInsertParams) error {
	return q.q.OperatorInsert(ctx, sqlitesqlc.OperatorInsertParams(arg))
}

func (q queries) OperatorGet(ctx context.Context, name string) (driver.Operator, error) {
	r, err := q.q.OperatorGet(ctx, name)
	return driver.Operator(r), err
}

func (q queries) OperatorList(ctx context.Context) ([]driver.Operator, error) {
	rs, err := q.q.OperatorList(ctx)
	return driver.Each(rs, err, func(r sqlitesqlc.Operator) driver.Operator { return driver.Operator(r) })
}

func (q queries) OperatorRevoke(ctx context.Context, arg driver.OperatorRevokeParams) (int64, error) {
	return q.q.OperatorRevoke(ctx, sqlitesqlc.OperatorRevokeParams(arg))
}

func (q queries) OperatorAdminCount(ctx context.Context) (int64, error) {
	return q.q.OperatorAdminCount(ctx)
}

func (q queries) OperatorTokenInsert(ctx context.Context, arg driver.OperatorTokenInsertParams) (int64, error) {
	return q.q.OperatorTokenInsert(ctx, sqlitesqlc.OperatorTokenInsertParams(arg))
}

func (q queries) OperatorTokenRevokeAll(ctx context.Context, arg driver.OperatorTokenRevokeAllParams) error {
	return q.q.OperatorTokenRevokeAll(ctx, sqlitesqlc.OperatorTokenRevokeAllParams(arg))
}

func (q queries) OperatorTokenRevoke(ctx context.Context, arg driver.OperatorTokenRevokeParams) (int64, error) {
	return q.q.OperatorTokenRevoke(ctx, sqlitesqlc.OperatorTokenRevokeParams(arg))
}

func (q queries) OperatorTokenList(ctx context.Context) ([]driver.OperatorTokenListRow, error) {
	rs, err := q.q.OperatorTokenList(ctx)
	return driver.Each(rs, err, func(r sqlitesqlc.OperatorTokenListRow) driver.OperatorTokenListRow {
		return driver.OperatorTokenListRow(r)
	})
}

func (q queries) OperatorTokenCheck(ctx context.Context, tokenHash string) (driver.OperatorTokenCheckRow, error) {
	r, err := q.q.OperatorTokenCheck(ctx, tokenHash)
	return driver.OperatorTokenCheckRow(r), err
}

func (q queries) AuditInsert(ctx context.Context, arg driver.AuditInsertParams) error {
	return q.q.AuditInsert(ctx, sqlitesqlc.AuditInsertParams(arg))
}

func (q queries) AuditList(ctx context.Context, arg driver.AuditListParams) ([]driver.AuditLog, error) {
	rs, err := q.q.AuditList(ctx, sqlitesqlc.AuditListParams(arg))
	return driver.Each(rs, err, func(r sqlitesqlc.AuditLog) driver.AuditLog { return driver.AuditLog(r) })
}

func (q queries) AuditPruneOpen(ctx context.Context) error { return q.q.AuditPruneOpen(ctx) }

func (q queries) AuditPruneClose(ctx context.Context) error { return q.q.AuditPruneClose(ctx) }

func (q queries) AuditPrune(ctx context.Context, arg driver.AuditPruneParams) (int64, error) {
	return q.q.AuditPrune(ctx, sqlitesqlc.AuditPruneParams(arg))
}

func (q queries) ModuleRevisionSetAuthor(ctx context.Context, arg driver.ModuleRevisionSetAuthorParams) error {
	return q.q.ModuleRevisionSetAuthor(ctx, sqlitesqlc.ModuleRevisionSetAuthorParams(arg))
}

func (q queries) AssignmentSetAssignedBy(ctx context.Context, arg driver.AssignmentSetAssignedByParams) error {
	return q.q.AssignmentSetAssignedBy(ctx, sqlitesqlc.AssignmentSetAssignedByParams(arg))
}

func (q queries) AssignmentSetTakenBy(ctx context.Context, arg driver.AssignmentSetTakenByParams) error {
	return q.q.AssignmentSetTakenBy(ctx, sqlitesqlc.AssignmentSetTakenByParams(arg))
}

func (q queries) RolloutSetSteered(ctx context.Context, arg driver.RolloutSetSteeredParams) error {
	return q.q.RolloutSetSteered(ctx, sqlitesqlc.RolloutSetSteeredParams(arg))
}
