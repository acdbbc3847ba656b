package db

import (
	"context"
	"time"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/db/driver"
)

// maxAuditDetail bounds an entry's detail: a line, not a request body.
const maxAuditDetail = 512

// Audit appends one entry to the audit log, in a transaction apart from the request's (its
// change has committed, or was refused, by then). At is set here, from the store's clock.
// Entries go through the committer, as reports do: an operator's burst of writes (a script
// assigning a fleet) shares commits rather than paying a sync of the log for each entry.
func (s *Store) Audit(ctx context.Context, e hq.AuditEntry) error {
	return s.inBatchTx(ctx, func(ctx context.Context, q driver.Queries) error {
		return q.AuditInsert(ctx, driver.AuditInsertParams{At: s.now(), Operator: e.Operator, Role: string(e.Role),
			Via: e.Via, Source: e.Source, Action: e.Action, Object: e.Object, Result: e.Result,
			Outcome: int64(e.Outcome), Detail: truncateBytes(e.Detail, maxAuditDetail)})
	})
}

func truncateBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// AuditFilter picks entries of the audit log: each field "" (or zero) for any. Before is the
// cursor: entries older than that id.
type AuditFilter struct {
	Operator, Object, Action string
	Since                    time.Time
	Before                   int64
	Limit                    int
}

// AuditPage is one page of the audit log, newest first; Next is the cursor of the next page,
// 0 on the last.
type AuditPage struct {
	Entries []hq.AuditEntry `json:"entries"`
	Next    int64           `json:"next,omitempty"`
}

// ListAudit returns one page of the audit log.
func (s *Store) ListAudit(ctx context.Context, f AuditFilter) (AuditPage, error) {
	limit := f.Limit
	if limit <= 0 {
		limit = 50
	}
	since := ""
	if !f.Since.IsZero() {
		since = hq.FormatTime(f.Since)
	}
	rows, err := s.reader().AuditList(ctx, driver.AuditListParams{Before: f.Before, Operator: f.Operator, Object: f.Object,
		Action: f.Action, Since: since, Max: int64(limit) + 1})
	if err != nil {
		return AuditPage{}, err
	}
	var p AuditPage
	if len(rows) > limit {
		rows = rows[:limit]
		p.Next = rows[limit-1].ID
	}
	p.Entries = make([]hq.AuditEntry, 0, len(rows))
	for _, r := range rows {
		p.Entries = append(p.Entries, hq.AuditEntry{ID: r.ID, At: hq.ParseTime(r.At), Operator: r.Operator,
			Role: hq.Role(r.Role), Via: r.Via, Source: r.Source, Action: r.Action, Object: r.Object,
			Result: r.Result, Outcome: int(r.Outcome), Detail: r.Detail})
	}
	return p, nil
}

// PruneAudit deletes audit entries older than keep, batch rows per transaction, and returns
// how many it deleted. The audit log's triggers refuse every other DELETE: each transaction
// opens the gate, deletes, and shuts it before committing.
func (s *Store) PruneAudit(ctx context.Context, keep time.Duration, batch int) (int64, error) {
	cutoff := hq.FormatTime(s.clock().Add(-keep))
	var total int64
	for {
		var n int64
		err := s.inTx(ctx, func(q driver.Queries) error {
			if err := q.AuditPruneOpen(ctx); err != nil {
				return err
			}
			var err error
			if n, err = q.AuditPrune(ctx, driver.AuditPruneParams{Cutoff: cutoff, Batch: int64(batch)}); err != nil {
				return err
			}
			return q.AuditPruneClose(ctx)
		})
		total += n
		if err != nil || n < int64(batch) {
			return total, err
		}
		if err := ctx.Err(); err != nil {
			return total, err
		}
	}
}
