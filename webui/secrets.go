package webui

import (
	"net/http"
	"strings"
)

// secretsPage is /secrets: every secret with its newest version, that value's digest prefix,
// when it was put, and which modules use it on how many nodes. Never a value: the store holds
// ciphertext alone, and these rows are read without it.
type secretsPage struct {
	chrome
	Now     when
	Secrets []secretRow
}

type secretRow struct {
	Name    string
	Version int64
	Digest  string
	Updated when
	Modules []string
	Nodes   int64
}

func (u *UI) secrets(w http.ResponseWriter, r *http.Request) {
	list, err := u.store.Secrets(r.Context())
	if err != nil {
		u.fail(w, r, err)
		return
	}
	now := u.Now()
	p := secretsPage{chrome: chrome{Title: "secrets", Refresh: refreshSeconds, Section: "secrets"}, Now: at(now, now)}
	for _, s := range list {
		p.Secrets = append(p.Secrets, secretRow{Name: s.Name, Version: s.Version, Digest: strings.TrimPrefix(s.Digest, "sha256:"),
			Updated: at(s.UpdatedAt, now), Modules: s.Modules, Nodes: s.Nodes})
	}
	u.render(w, r, http.StatusOK, "secrets", &p)
}
