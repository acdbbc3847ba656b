package api

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/db"
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
	if wait > 0 && s.Lot != nil && s.Lot.park(s, w, r, node, after, wait) {
		return // the lot answers it
	}
	s.inHandler.Add(1)
	gen, err := s.Store.WaitGeneration(r.Context(), node, after, wait)
	s.inHandler.Add(-1)
	if r.Context().Err() != nil {
		return // the host went away, or the controller is shutting down: no one to answer
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
	s.answerDeclaration(w, r, node)
}

// answerDeclaration composes, signs and writes the node's declaration: the answer of a poll
// answered by its handler or by the lot.
func (s *Server) answerDeclaration(w http.ResponseWriter, r *http.Request, node string) {
	compose := s.Store.Declaration
	if c, _ := r.Context().Value(callerKey).(caller); !c.operator {
		compose = func(ctx context.Context, node string) (hq.Declaration, error) {
			return s.Store.Compose(ctx, node, s.Instance)
		}
	}
	d, err := compose(r.Context(), node)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if k := s.keys(); k != nil {
		k.sign(&d)
	}
	setETag(w, d.Generation)
	// Unindented: a fleet's new revision is this answer once per node, and indenting it cost a
	// third of its time. Operators read a declaration with jq.
	writeCompactJSON(w, http.StatusOK, d)
}

// signedFor returns whether a report's signature is this controller's over the node, the
// generation and the digest the report names: then it answers a declaration this controller
// made for this node at that generation. The key signing now and those still in grace are
// the controller's; a retired key is not, whoever holds it now. nil: this controller signs
// nothing, so no signature can be checked.
//
// A host names the same signed declaration in every report until its next one, so the last
// signature verified for each node (under the same keys) is remembered, and a steady report
// costs a comparison rather than a verification.
func (s *Server) signedFor(node string) func(hq.Report) bool {
	k := s.keys()
	if k == nil {
		return nil
	}
	return func(rep hq.Report) bool {
		if rep.Signature == "" {
			return false
		}
		v := verified{keys: k, generation: rep.Generation, digest: rep.Digest, signature: rep.Signature}
		if last, ok := s.verified.Load(node); ok && last.(verified) == v {
			return true
		}
		if !k.signed(hq.SignedStatement(node, rep.Generation, rep.Digest), rep.Signature) {
			return false
		}
		// Cloned: a report's strings may share the body's buffer, which is used again.
		v.digest, v.signature = strings.Clone(v.digest), strings.Clone(v.signature)
		s.verified.Store(node, v)
		return true
	}
}

// verified is a signature found good for a node, under the keys that were honoured then.
type verified struct {
	keys              *Keys
	generation        int64
	digest, signature string
}

// checkSignature refuses a report that names a declaration (a send, a generation or a digest)
// with a signature that is not this controller's over it: before the report reaches the
// database, so it stores nothing. A host that has applied nothing yet names none.
func checkSignature(rep hq.Report, signed func(hq.Report) bool) error {
	if signed == nil || rep.SendID == 0 && rep.Generation == 0 && rep.Digest == "" {
		return nil
	}
	if signed(rep) {
		return nil
	}
	msg := fmt.Sprintf("the signature is not this controller's over generation %d and digest %s", rep.Generation, hq.TruncateText(rep.Digest))
	return &hq.Error{Code: hq.CodeInvalid, Message: "report refused: " + msg, Details: []hq.FieldError{{Field: "signature", Message: msg}}}
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
	rep, err := decodeReport(body, buf.results)
	buf.results = rep.Results
	if err != nil {
		fail(err)
		return
	}
	signed := s.signedFor(t.node)
	if err := checkSignature(rep, signed); err != nil {
		fail(err)
		return
	}
	resp, err := s.Store.Ingest(r.Context(), t.node, rep, db.IngestOptions{IfMatch: t.ifMatch, Signed: signed})
	if err != nil {
		fail(err)
		return
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
