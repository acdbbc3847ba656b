package db

import (
	"context"
	"database/sql"
	"strings"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/db/driver"
	"github.com/meshhq/hq/tmpl"
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
// drift's found content is shown against. A ref the node declares no file for, or whose
// content cannot be filled in, is left out. Only those files are read and filled in, not the
// node's whole declaration: a page that shows a few drifts costs a few files.
func (s *Store) DeclaredTexts(ctx context.Context, node string, refs []string) (map[string]string, error) {
	out := map[string]string{}
	if len(refs) == 0 {
		return out, nil
	}
	want := map[string]map[string]bool{}
	for _, r := range refs {
		module, name, _ := strings.Cut(r, "/")
		if want[module] == nil {
			want[module] = map[string]bool{}
		}
		want[module][name] = true
	}
	err := s.inReadTx(ctx, func(q driver.Queries) error {
		n, err := q.NodeGet(ctx, node)
		if err != nil {
			return notFound(err, "no node %s", node)
		}
		rows, err := q.AssignmentDeclaration(ctx, node)
		if err != nil {
			return err
		}
		values := valuesOf(n)
		for _, a := range rows {
			names := want[a.Module]
			if names == nil {
				continue
			}
			rs, err := s.resources(ctx, q, a.Module, a.Revision)
			if err != nil {
				return err
			}
			for _, r := range rs {
				if !names[r.Name] || r.Kind != hq.KindFile {
					continue
				}
				text := r.Content
				if tmpl.Is(text) {
					if text, err = tmpl.Render(text, values); err != nil {
						continue // not declarable as it stands: nothing to compare with
					}
				}
				out[hq.Ref(a.Module, r.Name)] = text
			}
		}
		return nil
	})
	return out, err
}
