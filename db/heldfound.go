package db

import (
	"context"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/db/driver"
)

// addHeldFound says, on each of a node's holds, what hostd last said it found in the held
// file, in the holds' order until hq.MaxHeldFound bytes of content are carried: a node holding
// many files has an answer of bounded size, as its report was.
func addHeldFound(ctx context.Context, q driver.Queries, node string, holds []hq.Hold) error {
	if len(holds) == 0 {
		return nil
	}
	rows, err := q.ResourceStateHeldFoundByNode(ctx, node)
	if err != nil || len(rows) == 0 {
		return err
	}
	byRef := make(map[[2]string]driver.ResourceStateHeldFoundByNodeRow, len(rows))
	for _, r := range rows {
		byRef[[2]string{r.Module, r.Resource}] = r
	}
	budget := hq.MaxHeldFound
	for i, h := range holds {
		r, ok := byRef[[2]string{h.Module, h.Resource}]
		switch {
		case !ok:
			continue
		case !r.HeldFound.Valid:
			holds[i].Found = &hq.FoundFile{Omitted: r.HeldFoundOmitted}
		case len(r.HeldFound.String) > budget:
			holds[i].Found = &hq.FoundFile{Omitted: hq.FoundTooMany}
		default:
			holds[i].Found = &hq.FoundFile{Text: r.HeldFound.String}
			budget -= len(r.HeldFound.String)
		}
	}
	return nil
}
