package api

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/api/longpoll"
	"github.com/meshhq/hq/db"
	"github.com/meshhq/hq/internal/bearer"
	"github.com/meshhq/hq/keys"
)

// declaration answers a node's long-poll: a declaration newer than ?after=, recorded as a
// send, or 304 when none arrives within ?wait=.
func (s *Server) declaration(w http.ResponseWriter, r *http.Request) {
	node, err := name(r, "node")
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	after, wait, err := pollParams(r, s.MaxWait)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if wait > 0 && s.MaxPolls > 0 && s.Waiting() >= s.MaxPolls {
		s.deferPoll(w, r, node, after)
		return
	}
	if wait > 0 {
		s.polling.holds(node)
	}
	if wait > 0 && s.Lot != nil && s.park(w, r, node, after, wait) {
		return // the lot answers it
	}
	ctx, end := context.WithCancelCause(r.Context())
	defer end(nil)
	release := func() {}
	if wait > 0 {
		release = s.inHandlers.hold(node, s.pollsPerNode(), end)
	}
	s.inHandler.Add(1)
	start := time.Now()
	gen, err := s.Store.WaitGeneration(ctx, node, after, wait)
	s.inHandler.Add(-1)
	release()
	if r.Context().Err() != nil {
		return // the host went away, or the controller is shutting down: no one to answer
	}
	if errors.Is(context.Cause(ctx), longpoll.ErrReplaced) {
		s.replaced(w, gen)
		return
	}
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if gen <= after {
		setETag(w, gen)
		w.WriteHeader(http.StatusNotModified)
		return
	}
	if wait > 0 {
		s.paced(r.Context(), start, wait)
	}
	s.answerDeclaration(w, r, node)
}

// deferredPollRetry is what a poll answered at once for MaxPolls asks its host to wait before
// it polls again: hostd waits that, or its interval when shorter.
const deferredPollRetry = 30 * time.Second

// deferPoll answers a poll at once, with the declaration when there is a newer one and 304
// otherwise, and asks the host to poll again later rather than wait here.
func (s *Server) deferPoll(w http.ResponseWriter, r *http.Request, node string, after int64) {
	s.deferred.Add(1)
	s.polling.deferred(node, time.Now())
	// Answered now, with the generation the node's token was checked with, read a moment ago.
	c, _ := r.Context().Value(callerKey).(caller)
	gen := c.check.Generation
	if !c.check.Valid {
		var err error
		if gen, err = s.Store.NodeGeneration(r.Context(), node); err != nil {
			s.writeError(w, r, err)
			return
		}
	}
	w.Header().Set("Retry-After", strconv.Itoa(int(deferredPollRetry.Seconds())))
	if gen <= after {
		setETag(w, gen)
		w.WriteHeader(http.StatusNotModified)
		return
	}
	s.answerDeclaration(w, r, node)
}

// Deferred is how many long-polls were answered at once because MaxPolls waited already.
func (s *Server) Deferred() int64 { return s.deferred.Load() }

// answerDeclaration composes, signs and writes the node's declaration: the answer of a poll
// answered by its handler or by the lot.
func (s *Server) answerDeclaration(w http.ResponseWriter, r *http.Request, node string) {
	k := s.keys()
	compose := s.Store.Declaration
	if c, _ := r.Context().Value(callerKey).(caller); !c.operator {
		compose = func(ctx context.Context, node string) (hq.Declaration, error) {
			var sign func(*hq.Declaration)
			if k != nil {
				sign = k.sign
			}
			return s.Store.ComposeSigned(ctx, node, s.Instance, sign)
		}
	}
	d, err := compose(r.Context(), node)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if k != nil && d.Signature == "" {
		k.sign(&d)
	}
	setETag(w, d.Generation)
	// Unindented: a fleet's new revision is this answer once per node, and indenting it cost a
	// third of its time. Operators read a declaration with jq. Its resources are written as
	// the store encoded them for the digest, once for every node of a revision.
	b, err := d.AppendJSON(make([]byte, 0, 64<<10))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeEncodedJSON(w, http.StatusOK, b)
}

// signedFor returns whether a report's signature is this controller's over the node, the
// generation and the digest the report names: then it answers a declaration this controller
// made for this node at that generation. The key signing now and those still in grace are
// the controller's; a retired key is not, whoever holds it now. It is asked only of a report
// whose send the database does not know.
func (s *Server) signedFor(node string) func(hq.Report) bool {
	return func(rep hq.Report) bool {
		k := s.keys()
		return k != nil && rep.Signature != "" && k.signed(keys.DeclarationStatement(node, rep.Generation, rep.Digest), rep.Signature)
	}
}

func pollParams(r *http.Request, maxWait time.Duration) (after int64, wait time.Duration, err error) {
	q := r.URL.Query()
	if v := q.Get("after"); v != "" {
		if after, err = strconv.ParseInt(v, 10, 64); err != nil || after < 0 {
			return 0, 0, hq.Errorf(hq.CodeBadRequest, "after must be a generation (a number from 0)")
		}
	} else {
		after = -1 // no after: the current declaration at once
	}
	if v := q.Get("wait"); v != "" {
		if wait, err = time.ParseDuration(v); err != nil || wait < 0 {
			return 0, 0, hq.Errorf(hq.CodeBadRequest, "wait must be a duration like 30s")
		}
	}
	return after, min(wait, maxWait), nil
}

func (s *Server) postReport(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	// observe counts the report before it is answered, so a scrape after the answer sees it.
	observe := func(committed bool) {
		if s.Reports != nil {
			s.Reports.ObserveReport(committed, time.Since(start))
		}
	}
	fail := func(err error) {
		observe(false)
		s.writeError(w, r, err)
	}
	t, err := readTarget(r)
	if err != nil {
		fail(err)
		return
	}
	buf := getReportBuffers()
	defer buf.put()
	body, err := readBody(w, r, buf.body)
	buf.body = body
	if err != nil {
		fail(err)
		return
	}
	opts := db.IngestOptions{IfMatch: t.ifMatch, Signed: s.signedFor(t.node)}
	if c, _ := r.Context().Value(callerKey).(caller); !c.operator {
		opts.Token = bearer.Token(r) // checked again in the write (proven.go)
	}
	resp, hash, err := s.ingestRepeat(r.Context(), t.node, body, opts)
	if errors.Is(err, errReadWhole) {
		resp, err = s.ingestWhole(r.Context(), t.node, body, buf, hash, opts)
	}
	if errors.Is(err, db.ErrTokenRefused) {
		s.proven.forget(t.node)
		observe(false)
		s.refuse(w, r, opts.Token, "this token belongs to another node")
		return
	}
	if err != nil {
		fail(err)
		return
	}
	if opts.Token != "" {
		s.proven.add(t.node, opts.Token)
	}
	observe(true)
	s.Store.WakeRollouts() // a report may finish or fail a rollout's node
	if k := s.keys(); k != nil {
		resp.Key, resp.KeyChain = k.Public, k.Chain
	}

	setETag(w, resp.Generation)
	writeJSON(w, http.StatusOK, resp)
}

func (s *Server) controllerKey(w http.ResponseWriter, r *http.Request) {
	k := s.keys()
	if k == nil {
		s.writeError(w, r, hq.Errorf(hq.CodeNotFound, "this controller does not sign declarations"))
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"key": k.Public})
}
