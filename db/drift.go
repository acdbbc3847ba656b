package db

import (
	"context"
	"database/sql"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/db/driver"
)

// recordDrifts keeps every put-back the report names, with what differed, in the report's
// transaction: drift leaves the resource applied, so no transition would ever say it happened.
func recordDrifts(ctx context.Context, q driver.Queries, node string, reportID int64, results []hq.Result, at string) error {
	for _, r := range results {
		if !r.Drift {
			continue
		}
		if err := q.DriftInsert(ctx, driver.DriftInsertParams{Node: node, Module: r.Module, Resource: r.Resource, At: at,
			ReportID: sql.NullInt64{Int64: reportID, Valid: true}, Detail: r.DriftDetail,
			Found: sql.NullString{String: r.DriftFound, Valid: r.DriftFound != ""}}); err != nil {
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

// DeclaredTexts is the content each of some file resources of a node (refs, module/resource)
// is declared to have now, as the node's declaration renders it, templates and all: what a
// drift's found content is shown against. A ref the node declares no file for is left out.
func (s *Store) DeclaredTexts(ctx context.Context, node string, refs []string) (map[string]string, error) {
	out := map[string]string{}
	if len(refs) == 0 {
		return out, nil
	}
	d, err := s.compose(ctx, node)
	if err != nil {
		return nil, err
	}
	want := map[string]bool{}
	for _, r := range refs {
		want[r] = true
	}
	for _, m := range d.Modules {
		for _, r := range m.Resources {
			if ref := hq.Ref(m.Name, r.Name); want[ref] && r.Kind == hq.KindFile {
				out[ref] = r.Content
			}
		}
	}
	return out, nil
}
