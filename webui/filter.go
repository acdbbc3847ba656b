package webui

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/db"
)

// listSize is how many rows one page of a list shows; nodeListSize how many nodes, which a
// fleet has many more of.
const (
	listSize     = 50
	nodeListSize = 200
)

// filterForm is the form above a list of nodes: the status and selector it is filtered by, as
// GET /nodes takes them, and the other parameters of the page the form keeps.
type filterForm struct {
	Action   string
	Status   string
	Selector string
	// Default names what an empty status shows.
	Default  string
	Statuses []string
	// Extra are the page's own choices, shown before the status.
	Extra []choice
	// Active is whether the list is filtered by anything the form sets.
	Active bool
	// Error says what is wrong with the filter, beside the form; the list is not filtered.
	Error string
}

// choice is a select of the filter form; an empty Value is "any".
type choice struct {
	Label, Name, Value string
	Options            []string
}

// statusChoices are the statuses a list of nodes can be filtered by, in order of precedence,
// and the one for every node that needs a look.
var statusChoices = func() []string {
	out := []string{string(db.NotConverged)}
	for _, s := range hq.Statuses {
		out = append(out, string(s))
	}
	return out
}()

// readNodeFilter reads a list of nodes' ?status=, ?selector= and ?after= with the parsing GET
// /nodes uses. An empty selector, which the form sends when left blank, filters nothing.
func readNodeFilter(r *http.Request, action string, limit int) (db.NodeFilter, filterForm, error) {
	q := r.URL.Query()
	var sel *string
	if s := q.Get("selector"); strings.TrimSpace(s) != "" {
		sel = &s
	}
	status := q.Get("status")
	if status == statusAll {
		status = "" // every node, as an empty status is on a list that is not the mesh's
	}
	f, err := db.ParseNodeFilter(status, sel)
	f.After, f.Limit = q.Get("after"), limit
	form := filterForm{Action: action, Status: q.Get("status"), Selector: q.Get("selector"), Default: "any",
		Statuses: statusChoices, Active: q.Get("status") != "" || sel != nil}
	return f, form, err
}

// pageLink is the page's path with its query, the cursor set to after: the link to the next
// page keeps the filter.
func pageLink(r *http.Request, path, cursor, after string) string {
	q := url.Values{}
	for k, vs := range r.URL.Query() {
		if k != cursor && len(vs) > 0 && vs[0] != "" {
			q.Set(k, vs[0])
		}
	}
	q.Set(cursor, after)
	return path + "?" + q.Encode()
}

// readInt reads a positive number from the query; absent or empty is 0.
func readInt(r *http.Request, key string) (int64, error) {
	s := r.URL.Query().Get(key)
	if s == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 1 {
		return 0, hq.Errorf(hq.CodeBadRequest, "%s must be a positive number, not %q", key, s)
	}
	return n, nil
}

// readName reads a name from the query, checked as a name in a path is; absent or empty is "".
func readName(r *http.Request, key string) (string, error) {
	s := r.URL.Query().Get(key)
	if s != "" && !hq.ValidName(s) {
		return "", hq.NameError(key, s)
	}
	return s, nil
}

// selectorLink is the mesh filtered by a selector.
func selectorLink(sel string) string {
	return "/?" + url.Values{"selector": {sel}}.Encode()
}
