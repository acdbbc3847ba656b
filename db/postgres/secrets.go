package postgres

import (
	"context"

	"github.com/meshhq/hq/db/driver"
	"github.com/meshhq/hq/db/postgres/internal/pgsqlc"
)

func (q queries) SecretList(ctx context.Context) ([]driver.SecretRow, error) {
	rs, err := q.q.SecretList(ctx)
	return driver.Each(rs, err, func(r pgsqlc.SecretListRow) driver.SecretRow { return driver.SecretRow(r) })
}

func (q queries) SecretGet(ctx context.Context, name string) (driver.SecretRow, error) {
	r, err := q.q.SecretGet(ctx, name)
	return driver.SecretRow(r), err
}

func (q queries) SecretUpsert(ctx context.Context, arg driver.SecretUpsertParams) (int64, error) {
	return q.q.SecretUpsert(ctx, pgsqlc.SecretUpsertParams(arg))
}

func (q queries) SecretDelete(ctx context.Context, name string) error {
	return q.q.SecretDelete(ctx, name)
}

func (q queries) SecretVersionInsert(ctx context.Context, arg driver.SecretVersionInsertParams) error {
	return q.q.SecretVersionInsert(ctx, pgsqlc.SecretVersionInsertParams(arg))
}

func (q queries) SecretVersionGet(ctx context.Context, arg driver.SecretVersionGetParams) (driver.SecretVersion, error) {
	r, err := q.q.SecretVersionGet(ctx, pgsqlc.SecretVersionGetParams(arg))
	return driver.SecretVersion(r), err
}

func (q queries) SecretVersionList(ctx context.Context, name string) ([]driver.SecretVersionListRow, error) {
	rs, err := q.q.SecretVersionList(ctx, name)
	return driver.Each(rs, err, func(r pgsqlc.SecretVersionListRow) driver.SecretVersionListRow { return driver.SecretVersionListRow(r) })
}

func (q queries) SecretVersionListNotTo(ctx context.Context, arg driver.SecretVersionListNotToParams) ([]driver.SecretVersion, error) {
	rs, err := q.q.SecretVersionListNotTo(ctx, pgsqlc.SecretVersionListNotToParams(arg))
	return driver.Each(rs, err, func(r pgsqlc.SecretVersion) driver.SecretVersion { return driver.SecretVersion(r) })
}

func (q queries) SecretVersionReencrypt(ctx context.Context, arg driver.SecretVersionReencryptParams) (int64, error) {
	return q.q.SecretVersionReencrypt(ctx, pgsqlc.SecretVersionReencryptParams(arg))
}

func (q queries) SecretModules(ctx context.Context, name string) ([]string, error) {
	return q.q.SecretModules(ctx, name)
}

func (q queries) SecretNodeCount(ctx context.Context, name string) (int64, error) {
	return q.q.SecretNodeCount(ctx, name)
}

func (q queries) NodeSecretUse(ctx context.Context, node string) (int64, error) {
	return q.q.NodeSecretUse(ctx, node)
}

func (q queries) ModuleRevisionSecretInsert(ctx context.Context, arg driver.ModuleRevisionSecretInsertParams) error {
	return q.q.ModuleRevisionSecretInsert(ctx, pgsqlc.ModuleRevisionSecretInsertParams(arg))
}

func (q queries) NodeSecretKeyGet(ctx context.Context, node string) (string, error) {
	return q.q.NodeSecretKeyGet(ctx, node)
}

func (q queries) NodeSecretKeySet(ctx context.Context, arg driver.NodeSecretKeySetParams) (int64, error) {
	return q.q.NodeSecretKeySet(ctx, pgsqlc.NodeSecretKeySetParams(arg))
}

func (q queries) SecretSealListByNode(ctx context.Context, arg driver.SecretSealListByNodeParams) ([]driver.SecretSealListByNodeRow, error) {
	rs, err := q.q.SecretSealListByNode(ctx, pgsqlc.SecretSealListByNodeParams(arg))
	return driver.Each(rs, err, func(r pgsqlc.SecretSealListByNodeRow) driver.SecretSealListByNodeRow {
		return driver.SecretSealListByNodeRow(r)
	})
}

func (q queries) SecretSealInsert(ctx context.Context, arg driver.SecretSealInsertParams) error {
	return q.q.SecretSealInsert(ctx, pgsqlc.SecretSealInsertParams(arg))
}

func (q queries) SecretSealDeleteOtherKeys(ctx context.Context, arg driver.SecretSealDeleteOtherKeysParams) error {
	return q.q.SecretSealDeleteOtherKeys(ctx, pgsqlc.SecretSealDeleteOtherKeysParams(arg))
}
