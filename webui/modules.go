package webui

import (
	"fmt"
	"net/http"
	"strconv"

	"github.com/go-chi/chi/v5"

	"github.com/meshhq/hq"
)

// modulesPage is /modules: every module a page at a time, with its newest revision and how
// many nodes have it.
type modulesPage struct {
	chrome
	Now     when
	Modules []moduleRow
	Next    string
}

type moduleRow struct {
	Name       string
	Revision   int64
	Nodes      int
	Placements int
	Updated    when
}

func (u *UI) modules(w http.ResponseWriter, r *http.Request) {
	after, err := readName(r, "after")
	if err != nil {
		u.fail(w, r, err)
		return
	}
	list, err := u.store.PageModules(r.Context(), after, listSize)
	if err != nil {
		u.fail(w, r, err)
		return
	}
	now := u.Now()
	p := modulesPage{chrome: chrome{Title: "modules", Refresh: refreshSeconds, Section: "modules"}, Now: at(now, now)}
	for _, m := range list.Modules {
		p.Modules = append(p.Modules, moduleRow{Name: m.Name, Revision: m.Revision, Nodes: m.Nodes, Placements: m.Placements, Updated: at(m.UpdatedAt, now)})
	}
	if list.Next != "" {
		p.Next = pageLink(r, "/modules", "after", list.Next)
	}
	u.render(w, r, http.StatusOK, "modules", &p)
}

// revisionsShown is how many revisions one module page lists.
const revisionsShown = 20

// modulePage is /modules/{name}: the module, the placements that place it, and its revisions
// newest first, each with a link to what changed from the one before.
type modulePage struct {
	chrome
	Now        when
	Module     moduleRow
	Created    when
	Placements []placementRow
	Revisions  []revisionRow
	Next       string
	// DiffFrom and DiffTo fill the form that compares two revisions.
	DiffFrom, DiffTo int64
}

type revisionRow struct {
	Revision  int64
	Resources int
	Digest    string
	Created   when
	// PushedBy and Message are who pushed the revision and what they said of it.
	PushedBy, Message string
	// Previous is the revision before, which the row links a diff against; 0 for the first.
	Previous int64
}

// moduleName reads the module's name from the path.
func moduleName(r *http.Request) (string, error) {
	name := chi.URLParam(r, "module")
	if !hq.ValidName(name) {
		return "", hq.NameError("module", name)
	}
	return name, nil
}

func (u *UI) module(w http.ResponseWriter, r *http.Request) {
	name, err := moduleName(r)
	var before int64
	if err == nil {
		before, err = readInt(r, "after")
	}
	if err != nil {
		u.fail(w, r, err)
		return
	}
	ctx := r.Context()
	m, err := u.store.GetModuleSummary(ctx, name)
	if err != nil {
		u.fail(w, r, err)
		return
	}
	pls, err := u.store.PlacementsOfModule(ctx, name)
	if err != nil {
		u.fail(w, r, err)
		return
	}
	revs, err := u.store.PageRevisions(ctx, name, before, revisionsShown)
	if err != nil {
		u.fail(w, r, err)
		return
	}
	now := u.Now()
	p := modulePage{chrome: chrome{Title: "module " + name, Refresh: refreshSeconds, Section: "modules"}, Now: at(now, now),
		Module:  moduleRow{Name: m.Name, Revision: m.Revision, Nodes: m.Nodes, Placements: m.Placements, Updated: at(m.UpdatedAt, now)},
		Created: at(m.CreatedAt, now), DiffFrom: max(1, m.Revision-1), DiffTo: m.Revision}
	for _, pl := range pls {
		p.Placements = append(p.Placements, placementRowOf(pl))
	}
	for _, rv := range revs.Revisions {
		p.Revisions = append(p.Revisions, revisionRow{Revision: rv.Revision, Resources: rv.Resources, Digest: short(rv.Digest),
			Created: at(rv.CreatedAt, now), PushedBy: rv.PushedBy, Message: rv.Message, Previous: rv.Revision - 1})
	}
	if revs.Next != 0 {
		p.Next = pageLink(r, "/modules/"+name, "after", strconv.FormatInt(revs.Next, 10))
	}
	u.render(w, r, http.StatusOK, "module", &p)
}

// moduleNodesPage is /modules/{name}/nodes: the nodes the module is assigned to, a page at a
// time, each with the revision its assignment pins and where it comes from.
type moduleNodesPage struct {
	chrome
	Now    when
	Module moduleRow
	Filter filterForm
	Nodes  []placedNodeRow
	Next   string
}

func (u *UI) moduleNodes(w http.ResponseWriter, r *http.Request) {
	name, err := moduleName(r)
	if err != nil {
		u.fail(w, r, err)
		return
	}
	path := "/modules/" + name + "/nodes"
	f, form, err := readNodeFilter(r, path, nodeListSize)
	if err != nil {
		u.fail(w, r, err)
		return
	}
	ctx := r.Context()
	m, err := u.store.GetModuleSummary(ctx, name)
	if err != nil {
		u.fail(w, r, err)
		return
	}
	assigned, err := u.store.AssignedNodes(ctx, name)
	if err != nil {
		u.fail(w, r, err)
		return
	}
	has := make(map[string]bool, len(assigned))
	for _, n := range assigned {
		has[n] = true
	}
	f.Match = func(n string) bool { return has[n] }
	nodes, err := u.store.ListNodes(ctx, f)
	if err != nil {
		u.fail(w, r, err)
		return
	}
	now := u.Now()
	p := moduleNodesPage{chrome: chrome{Title: "nodes of " + name, Refresh: refreshSeconds, Section: "modules"}, Now: at(now, now),
		Module: moduleRow{Name: m.Name, Revision: m.Revision, Nodes: m.Nodes, Placements: m.Placements, Updated: at(m.UpdatedAt, now)},
		Filter: form, Nodes: placedNodes(nodes.Nodes, name, "")}
	if nodes.Next != "" {
		p.Next = pageLink(r, path, "after", nodes.Next)
	}
	u.render(w, r, http.StatusOK, "modulenodes", &p)
}

// revisionPage is /modules/{name}/revisions/{revision}: every resource of the revision with
// its spec, and the content of its text files.
type revisionPage struct {
	chrome
	Module    string
	Revision  int64
	Previous  int64
	Newest    int64
	Digest    string
	Created   when
	Resources []resourceSpec
}

// maxRevisionText bounds the content one revision page shows, all files together.
const maxRevisionText = 1 << 20

// resourceSpec is one resource of a revision as the page shows it.
type resourceSpec struct {
	Name   string
	Kind   string
	Fields []fact
	// Content is a file's text; Note says why it is not shown instead.
	Content string
	Note    string
}

func (u *UI) revision(w http.ResponseWriter, r *http.Request) {
	name, err := moduleName(r)
	if err != nil {
		u.fail(w, r, err)
		return
	}
	n, err := strconv.ParseInt(chi.URLParam(r, "revision"), 10, 64)
	if err != nil || n < 1 {
		u.fail(w, r, hq.Errorf(hq.CodeBadRequest, "a revision is a positive number, not %q", chi.URLParam(r, "revision")))
		return
	}
	ctx := r.Context()
	m, err := u.store.GetModuleSummary(ctx, name)
	if err != nil {
		u.fail(w, r, err)
		return
	}
	rev, err := u.store.GetRevision(ctx, name, n)
	if err != nil {
		u.fail(w, r, err)
		return
	}
	now := u.Now()
	p := revisionPage{chrome: chrome{Title: fmt.Sprintf("%s r%d", name, n), Section: "modules"},
		Module: name, Revision: n, Previous: n - 1, Newest: m.Revision, Digest: rev.Digest, Created: at(rev.CreatedAt, now)}
	shown := 0
	for _, res := range rev.Resources {
		s := resourceSpec{Name: res.Name, Kind: res.Kind, Fields: specFields(res)}
		s.Content, s.Note = fileText(res)
		if shown += len(s.Content); shown > maxRevisionText {
			s.Content, s.Note = "", fmt.Sprintf("%d bytes of content: not shown, as the page shows at most %d KiB of content", len(res.Content), maxRevisionText>>10)
		}
		p.Resources = append(p.Resources, s)
	}
	u.render(w, r, http.StatusOK, "revision", &p)
}

// diffPage is /modules/{name}/diff?from=N&to=M: what changed between two revisions, resource
// by resource, with a unified diff of each text file's content.
type diffPage struct {
	chrome
	Module   string
	From, To int64
	Newest   int64
	Summary  string
	Changes  []resourceChange
}

func (u *UI) diff(w http.ResponseWriter, r *http.Request) {
	name, err := moduleName(r)
	if err != nil {
		u.fail(w, r, err)
		return
	}
	ctx := r.Context()
	m, err := u.store.GetModuleSummary(ctx, name)
	if err != nil {
		u.fail(w, r, err)
		return
	}
	from, err := readInt(r, "from")
	var to int64
	if err == nil {
		to, err = readInt(r, "to")
	}
	if err != nil {
		u.fail(w, r, err)
		return
	}
	// Without them, the newest revision against the one before.
	if to == 0 {
		to = m.Revision
	}
	if from == 0 {
		from = max(1, to-1)
	}
	a, err := u.store.GetRevision(ctx, name, from)
	if err != nil {
		u.fail(w, r, err)
		return
	}
	b, err := u.store.GetRevision(ctx, name, to)
	if err != nil {
		u.fail(w, r, err)
		return
	}
	changes, summary := diffRevisions(a, b)
	p := diffPage{chrome: chrome{Title: fmt.Sprintf("%s r%d→r%d", name, from, to), Section: "modules"},
		Module: name, From: from, To: to, Newest: m.Revision, Summary: summary, Changes: changes}
	u.render(w, r, http.StatusOK, "diff", &p)
}
