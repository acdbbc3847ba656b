package db

import (
	"slices"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/selector"
)

// NotConverged is the status filter for every node that needs a look: any status but
// converged.
const NotConverged hq.Status = "not-converged"

// ParseNodeFilter reads the filter of a node listing from the words an operator gives, the
// same for GET /nodes and for every page that lists nodes: status is any node status,
// NotConverged, or empty for every status; sel, when given (nil when absent), is a label
// selector. A bad status is bad_request; a bad selector is invalid, naming its term. Paging
// (After, Limit) is the caller's.
func ParseNodeFilter(status string, sel *string) (NodeFilter, error) {
	var f NodeFilter
	switch st := hq.Status(status); {
	case st == "":
	case st == NotConverged:
		f.NotConverged = true
	case slices.Contains(hq.Statuses, st):
		f.Status = st
	default:
		return f, hq.Errorf(hq.CodeBadRequest, "status must be one of %v or %s", hq.Statuses, NotConverged)
	}
	if sel != nil {
		parsed, err := selector.Parse(*sel)
		if err != nil {
			return f, err
		}
		f.Selector = &parsed
	}
	return f, nil
}
