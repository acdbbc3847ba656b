package webui

import (
	"net/http"
	"strconv"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/db"
)

// auditPage is /audit: the audit log, newest first, filtered as GET /api/v1/audit is.
type auditPage struct {
	chrome
	Now                      when
	Operator, Object, Action string
	Entries                  []auditRow
	Next                     string
}

type auditRow struct {
	hq.AuditEntry
	When    when
	Refused bool
}

func (u *UI) audit(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	f := db.AuditFilter{Operator: q.Get("operator"), Object: q.Get("object"), Action: q.Get("action"), Limit: listSize}
	if v := q.Get("before"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 1 {
			u.fail(w, r, hq.Errorf(hq.CodeBadRequest, "before is an entry id, a positive number, not %q", v))
			return
		}
		f.Before = n
	}
	list, err := u.store.ListAudit(r.Context(), f)
	if err != nil {
		u.fail(w, r, err)
		return
	}
	now := u.Now()
	p := auditPage{chrome: chrome{Title: "audit", Refresh: refreshSeconds, Section: "audit"}, Now: at(now, now),
		Operator: f.Operator, Object: f.Object, Action: f.Action}
	for _, e := range list.Entries {
		p.Entries = append(p.Entries, auditRow{AuditEntry: e, When: at(e.At, now), Refused: e.Outcome >= 400})
	}
	if list.Next != 0 {
		p.Next = pageLink(r, "/audit", "before", strconv.FormatInt(list.Next, 10))
	}
	u.render(w, r, http.StatusOK, "audit", &p)
}
