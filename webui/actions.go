package webui

import (
	"context"
	"net/http"
	"net/url"
	"strconv"

	"github.com/go-chi/chi/v5"

	"github.com/meshhq/hq"
)

// The actions call the store as the API's handlers of the same paths do, unconditionally (no
// If-Match: the operator pressed the button on what the page showed). Each answers 303 back to
// the page it belongs to with a flash, or the refusal with the store's own message, and
// changes nothing then.

func (u *UI) retry(w http.ResponseWriter, r *http.Request) {
	node, module, resource, err := names(r, "node", "module", "resource")
	if err != nil {
		u.fail(w, r, err)
		return
	}
	u.act(w, r, nodePath(node), "retried", func(ctx context.Context) error {
		_, err := u.store.Retry(ctx, node, module, resource, nil)
		return err
	})
}

func (u *UI) take(w http.ResponseWriter, r *http.Request) {
	node, module, _, err := names(r, "node", "module", "")
	if err != nil {
		u.fail(w, r, err)
		return
	}
	u.act(w, r, nodePath(node), "taken", func(ctx context.Context) error {
		_, err := u.store.Take(ctx, node, module, nil)
		return err
	})
}

func (u *UI) pause(w http.ResponseWriter, r *http.Request) {
	u.rolloutAction(w, r, "paused", u.store.PauseRollout)
}

func (u *UI) promote(w http.ResponseWriter, r *http.Request) {
	u.rolloutAction(w, r, "promoted", u.store.PromoteRollout)
}

// rollback starts the placement's rollback to the form's revision and shows the new rollout.
func (u *UI) rollback(w http.ResponseWriter, r *http.Request) {
	placement, _, _, err := names(r, "placement", "", "")
	if err != nil {
		u.fail(w, r, err)
		return
	}
	rev, err := strconv.ParseInt(r.PostFormValue("revision"), 10, 64)
	if err != nil || rev < 1 {
		u.fail(w, r, hq.Errorf(hq.CodeBadRequest, "a rollback names the revision to go back to, a positive number, not %q", r.PostFormValue("revision")))
		return
	}
	ro, err := u.store.RollbackPlacement(r.Context(), placement, rev)
	if err != nil {
		u.fail(w, r, err)
		return
	}
	setFlash(w, r, "rolledback")
	http.Redirect(w, r, rolloutPath(ro.ID), http.StatusSeeOther)
}

func (u *UI) resume(w http.ResponseWriter, r *http.Request) {
	u.rolloutAction(w, r, "resumed", u.store.ResumeRollout)
}

func (u *UI) abort(w http.ResponseWriter, r *http.Request) {
	u.rolloutAction(w, r, "aborted", u.store.AbortRollout)
}

func (u *UI) rolloutAction(w http.ResponseWriter, r *http.Request, flash string, do func(ctx context.Context, id int64) (hq.Rollout, error)) {
	id, err := rolloutID(r)
	if err != nil {
		u.fail(w, r, err)
		return
	}
	u.act(w, r, rolloutPath(id), flash, func(ctx context.Context) error {
		_, err := do(ctx, id)
		return err
	})
}

// act does what an action does and answers it.
func (u *UI) act(w http.ResponseWriter, r *http.Request, back, flash string, do func(ctx context.Context) error) {
	if err := do(r.Context()); err != nil {
		u.fail(w, r, err)
		return
	}
	setFlash(w, r, flash)
	http.Redirect(w, r, back, http.StatusSeeOther)
}

// names reads up to three names from the path, each checked as the API checks them; an empty
// parameter is not read.
func names(r *http.Request, a, b, c string) (string, string, string, error) {
	var out [3]string
	for i, p := range []string{a, b, c} {
		if p == "" {
			continue
		}
		v := chi.URLParam(r, p)
		if !hq.ValidName(v) {
			return "", "", "", hq.NameError(p, v)
		}
		out[i] = v
	}
	return out[0], out[1], out[2], nil
}

// rolloutID reads the rollout's id from the path.
func rolloutID(r *http.Request) (int64, error) {
	id, err := strconv.ParseInt(chi.URLParam(r, "rollout"), 10, 64)
	if err != nil || id < 1 {
		return 0, hq.Errorf(hq.CodeBadRequest, "a rollout is named by its id, a positive number, not %q", chi.URLParam(r, "rollout"))
	}
	return id, nil
}

func nodePath(node string) string { return "/nodes/" + url.PathEscape(node) }

func rolloutPath(id int64) string { return "/rollouts/" + strconv.FormatInt(id, 10) }
