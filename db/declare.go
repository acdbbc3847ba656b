package db

import (
	"context"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/db/driver"
)

// declRow is one resource as resource_states declares it.
type declRow struct {
	Name     string `json:"name"`
	Kind     string `json:"kind"`
	Digest   string `json:"digest"`
	Position int64  `json:"position"`
	Group    string `json:"group"`
}

// resourceDiff is what changes on a node when its pin of a module moves from one revision's
// resources to another's: the same for every node pinned at the first, so it is worked out
// once and written for many nodes at a time.
type resourceDiff struct {
	revision int64     // the revision it leads to, whose rows the added are copied from
	added    []declRow // new: enter pending
	changed  []declRow // another spec: start over as pending
	moved    []declRow // same spec, another place in the module
	removed  []string  // no longer declared
	// every says that added is all of the revision's resources: a new assignment.
	every bool
}

func declRowOf(r hq.Resource, position int) declRow {
	return declRow{Name: r.Name, Kind: r.Kind, Digest: r.Digest(), Position: int64(position), Group: r.Group}
}

// diffResources compares two revisions' resources, the second of them revision; from is nil
// for a new assignment.
func diffResources(from, to []hq.Resource, revision int64) resourceDiff {
	d := resourceDiff{revision: revision}
	old := make(map[string]declRow, len(from))
	for i, r := range from {
		old[r.Name] = declRowOf(r, i)
	}
	for i, r := range to {
		row := declRowOf(r, i)
		was, ok := old[r.Name]
		delete(old, r.Name)
		switch {
		case !ok:
			d.added = append(d.added, row)
		case was.Digest != row.Digest || was.Kind != row.Kind:
			d.changed = append(d.changed, row)
		case was.Position != row.Position || was.Group != row.Group:
			d.moved = append(d.moved, row)
		}
	}
	for _, r := range from {
		if _, ok := old[r.Name]; ok {
			d.removed = append(d.removed, r.Name)
		}
	}
	d.every = len(d.added) == len(to)
	return d
}

// rows is how many resource rows the diff writes on one node.
func (d resourceDiff) rows() int {
	return len(d.added) + len(d.changed) + len(d.moved) + len(d.removed)
}

// redeclare writes the diff on every node named, a statement per kind of change (and one per
// changed or moved resource), however many nodes there are. What is added is copied from the
// revision's rows in module_revision_resources. The triggers record every change
// of state in transitions and keep the nodes' counts.
func redeclare(ctx context.Context, q driver.Queries, module string, d resourceDiff, nodes []string, since, reason string) error {
	if len(nodes) == 0 || d.rows() == 0 {
		return nil
	}
	if len(d.added) > 0 {
		p := driver.ResourceStateDeclareParams{Module: module, Revision: d.revision, Every: d.every,
			Since: since, Reason: reason, Nodes: nodes}
		if !d.every {
			p.Names = make([]string, len(d.added))
			for i, r := range d.added {
				p.Names[i] = r.Name
			}
		}
		if err := q.ResourceStateDeclare(ctx, p); err != nil {
			return err
		}
	}
	for _, r := range d.changed {
		if err := q.ResourceStateRedeclareOnNodes(ctx, driver.ResourceStateRedeclareOnNodesParams{Kind: r.Kind, SpecDigest: r.Digest,
			Position: r.Position, GroupName: r.Group, Since: since, Reason: reason + " changed it",
			Module: module, Resource: r.Name, Nodes: nodes}); err != nil {
			return err
		}
	}
	for _, r := range d.moved {
		if err := q.ResourceStateMoveOnNodes(ctx, driver.ResourceStateMoveOnNodesParams{Position: r.Position, GroupName: r.Group,
			Module: module, Resource: r.Name, Nodes: nodes}); err != nil {
			return err
		}
	}
	if len(d.removed) > 0 {
		if err := q.ResourceStateRemoveOnNodes(ctx, driver.ResourceStateRemoveOnNodesParams{Module: module, Nodes: nodes, Names: d.removed}); err != nil {
			return err
		}
	}
	return nil
}
