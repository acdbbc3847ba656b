package db

import (
	"github.com/meshhq/hq/db/driver"
	"math"

	"cmp"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/meshhq/hq"
)

// IngestOptions are what a caller adds to a report.
type IngestOptions struct {
	// IfMatch, when set, refuses the report with a conflict, changing nothing, unless it is the
	// node's generation.
	IfMatch *int64
	// Signed reports whether the report's signature is the controller's own over its digest.
	// It is asked of a report whose send this database does not know (a database restored
	// from a backup, a node registered again); nil means no signature is ever good. A send
	// this database knows is believed only with the signature it was sent with.
	Signed func(hq.Report) bool
	// Outcome, when set, is OutcomeDigest of the report with its texts bounded (BoundText),
	// worked out by the caller.
	Outcome string
	// Token, when set, is the token the report came with, checked against the node's in the
	// write itself: when it is not the node's (the node deleted, or its token replaced since the
	// caller last proved it), Ingest changes nothing and returns ErrTokenRefused.
	Token string
	// Repeat says the report's results are left out (rep.Results is nil): they are, byte for
	// byte, those of a report this controller took in before, whose outcome is Outcome and
	// which had no failure and no drift. Such a report can only repeat the node's last one;
	// when the node's last report has another outcome, Ingest changes nothing and returns
	// ErrNotARepeat, and the caller sends the report again with its results.
	Repeat bool
}

// ErrTokenRefused refuses a report whose IngestOptions.Token is not its node's.
var ErrTokenRefused = errors.New("the report's token is not its node's")

// ErrNotARepeat refuses a report sent without its results (IngestOptions.Repeat) that does not
// repeat the node's last report.
var ErrNotARepeat = hq.Errorf(hq.CodeConflict, "the report is not a repeat of the node's last report: send its results")

// Ingest records one report from a node in one transaction: the resources' lifecycle, the
// report row (or a repeat of the last one), the sends it answers, and the node's last-seen time.
//
// A report moves resource rows only when it answers a send this database recorded (send id,
// generation and digest match) for the node's current generation, and then only rows that
// declaration names: results for anything else are refused (invalid). A report of a
// declaration the database does not know, but that the controller signed for a generation
// ahead of the node's, moves nothing but raises the node's generation past the one the host
// applied (fencing). Anything else is
// refused (invalid), and a refused report changes nothing. Ingest returns a not_found error
// for an unknown node and a conflict when IfMatch does not hold.
func (s *Store) Ingest(ctx context.Context, node string, rep hq.Report, opts IngestOptions) (hq.ReportResponse, error) {
	var resp hq.ReportResponse
	if err := hq.ValidateReport(rep); err != nil {
		return resp, err
	}
	if opts.Repeat && opts.Outcome == "" {
		return resp, errors.New("ingest: a report without its results needs their outcome")
	}
	rep.BoundText()
	outcome := opts.Outcome
	if outcome == "" {
		outcome = OutcomeDigest(rep)
	}
	now := s.clock()
	at := hq.FormatTime(now)
	raised, quickly := false, false
	tokenHash := ""
	if opts.Token != "" {
		tokenHash = hashToken(opts.Token)
	}
	clean := !hasFailure(rep.Results) && !hasDrift(rep.Results)
	// Written in a commit it may share with other reports (batch.go), and so from nothing each
	// time it runs.
	req := &batchRequest{ctx: ctx, node: node}
	// A report that may be steady: the engine may take it without the general path.
	steady := clean && rep.SendID > 0 && rep.Refused == nil && rep.Host == nil
	sp := driver.ReportSteadyParams{Node: node, TokenHash: tokenHash, IfMatch: optInt(opts.IfMatch), SendID: rep.SendID,
		Generation: rep.Generation, Digest: rep.Digest, Signature: rep.Signature, Outcome: outcome, Results: int64(len(rep.Results)), At: at}
	if _, ok := s.wq.(driver.SteadyContext); ok && steady && !s.generalOnly {
		req.quick = func(ctx context.Context, q driver.Queries) (bool, error) {
			row, err := takeSteady(ctx, q, sp)
			if err != nil || !row.Taken {
				return false, err
			}
			resp, raised = steadyResponse(row), false
			s.steadyHere.Add(1)
			return true, nil
		}
	}
	if _, ok := s.wq.(driver.SteadyReports); ok && steady {
		// An engine that takes a steady report in one statement is asked first, and one whose
		// results are all plain "applied" is asked whether it can take it whole.
		req.took = func(row driver.ReportSteadyRow) {
			resp, raised, quickly = steadyResponse(row), false, true
		}
		if settled, ok := settledReport(rep); ok && s.composed.namesEvery(rep.Digest, rep.Results) {
			settled.Node, settled.TokenHash, settled.IfMatch, settled.Outcome, settled.At = node, tokenHash, optInt(opts.IfMatch), outcome, at
			req.settled = &settled
		} else {
			req.steady = &sp
		}
		req.quick = func(ctx context.Context, q driver.Queries) (bool, error) {
			var row driver.ReportSteadyRow
			var err error
			if req.settled != nil {
				row, err = q.(driver.SteadyReports).ReportSettled(ctx, *req.settled)
			} else {
				row, err = q.(driver.SteadyReports).ReportSteady(ctx, *req.steady)
			}
			if err != nil || !row.Taken {
				return false, err
			}
			req.took(row)
			return true, nil
		}
	}
	req.fn = func(ctx context.Context, q driver.Queries) error {
		resp, raised, quickly = hq.ReportResponse{}, false, false
		n, err := lockNodeWithToken(ctx, q, node, tokenHash, opts.IfMatch)
		if err != nil {
			return err
		}
		prev, hasPrev, err := lastReport(ctx, q, n)
		if err != nil {
			return err
		}
		same := sameOutcome(prev, hasPrev, outcome)
		if opts.Repeat && !same {
			return ErrNotARepeat
		}
		ans, err := s.answered(ctx, q, n, rep, opts.Signed, same)
		if err != nil {
			return err
		}
		if raised, err = raiseGeneration(ctx, q, n, rep, ans); err != nil {
			return err
		}
		resp.Generation = max(n.Generation, rep.Generation+driver.Flag(raised))
		if same && clean {
			// The steady state: the node says what it said last time and nothing is failing,
			// so no resource can move. Only the repeat is counted.
			resp.ReportID, resp.Summary = prev.ID, prev.Summary
			err = q.ReportRepeat(ctx, driver.ReportRepeatParams{ID: prev.ID, LastAt: at})
		} else {
			resp.ReportID, resp.Summary, err = s.record(ctx, q, n, rep, ans, outcome, prev, same, now)
		}
		if err != nil {
			return err
		}
		// Drift is kept for the declaration the node has now, whose resources are its rows.
		if ans.known && rep.Generation == n.Generation {
			if err := recordDrifts(ctx, q, node, resp.ReportID, rep.Results, at); err != nil {
				return err
			}
			if !(same && clean) {
				if err := recordContainers(ctx, q, node, resp.ReportID, rep.Results, at); err != nil {
					return err
				}
			}
		}
		if err := q.NodeSetReported(ctx, driver.NodeSetReportedParams{Name: node, LastReportAt: sql.NullString{String: at, Valid: true}, LastReportID: sql.NullInt64{Int64: resp.ReportID, Valid: true}}); err != nil {
			return err
		}
		if err := recordSends(ctx, q, n, rep, ans, at); err != nil {
			return err
		}
		if h := rep.Host; h != nil {
			if err := q.NodeSetHost(ctx, driver.NodeSetHostParams{Name: node, HostdVersion: h.HostdVersion, Os: h.OS, Arch: h.Arch,
				BootedAt: optTime(h.BootedAt)}); err != nil {
				return err
			}
		}
		resp.Stuck, resp.Retry, err = nodeFlags(ctx, q, node)
		return err
	}
	err := s.submit(req)
	if err == nil && raised {
		s.bells.ring(node)
	}
	if err == nil && quickly {
		s.steadyTaken.Add(1)
	}
	return resp, err
}

// steadyResponse is the answer to a report an engine took as steady or settled.
func steadyResponse(row driver.ReportSteadyRow) hq.ReportResponse {
	return hq.ReportResponse{ReportID: row.ReportID, Summary: row.Summary, Generation: row.Generation, Stuck: row.Stuck, Retry: row.Retry}
}

// settledReport says whether rep is one driver.SteadyReports.ReportSettled may take: results
// that are all plain "applied", all attempted and changed or none, each resource once (the
// caller checks that they name every resource of the declaration). It fills in what comes
// from the report itself.
func settledReport(rep hq.Report) (driver.ReportSettledParams, bool) {
	p := driver.ReportSettledParams{SendID: rep.SendID, Generation: rep.Generation, Digest: rep.Digest, Signature: rep.Signature,
		StartedAt: optTime(rep.StartedAt), FinishedAt: optTime(rep.FinishedAt)}
	if len(rep.Results) == 0 {
		return p, false
	}
	first := rep.Results[0]
	for _, r := range rep.Results {
		// A container's status may be news, which the general path writes (recordContainers);
		// a report that repeats the last one is still taken by ReportSteady.
		if !plainApplied(r) || r.Container != nil || (r.Attempted && r.Changed) != (first.Attempted && first.Changed) {
			return p, false
		}
	}
	// The line as the general path would write it: the database checks that the send declared
	// as many resources as there are results, and that none of them is stuck.
	t := hq.TallyReport(&rep, len(rep.Results), nil)
	if t.Applied != len(rep.Results) {
		return p, false // a resource named twice
	}
	p.Summary = t.Line()
	if first.Attempted && first.Changed {
		p.Attempt = 1
	}
	p.Results = int64(len(rep.Results))
	return p, true
}

// answer is what a report answers: which declaration it names, and how far it is believed.
type answer struct {
	// known: the report names a send this database recorded, with its generation and digest.
	known bool
	// sent is how many resources that send declared; 0 when it is not known.
	sent int
	// signed: not known here, but the controller's own key signed its digest.
	signed bool
}

// applied reports whether the report says the host applied a declaration this controller made.
func (a answer) applied() bool { return a.known || a.signed }

// answered checks the declaration a report names against the sends this database recorded,
// and bounds the results by it. same says the report repeats the node's last outcome, whose
// results were checked then.
func (s *Store) answered(ctx context.Context, q driver.Queries, n driver.Node, rep hq.Report, signed func(hq.Report) bool, same bool) (answer, error) {
	var a answer
	if rep.SendID == 0 && rep.Digest == "" && rep.Generation == 0 {
		// A host that has applied nothing yet: it can only say so, and what it refused.
		if len(rep.Results) > 0 {
			return a, reportInvalid("results", "a report that answers no declaration (send_id 0) has no results")
		}
		return a, nil
	}
	if rep.SendID > 0 {
		send, err := q.SendGet(ctx, driver.SendGetParams{Node: n.Name, ID: rep.SendID})
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return a, err
		}
		// A send recorded with its signature is believed only with it; one recorded before
		// sends kept signatures, by its generation and digest alone.
		a.known = err == nil && send.Generation == rep.Generation && send.Digest == rep.Digest && send.Outcome != "refused" &&
			(send.Signature == "" || send.Signature == rep.Signature)
		a.sent = int(send.Resources)
	}
	if !a.known {
		// Only a host ahead of this database can have applied a send it does not know: one
		// restored from a backup, or a node registered again. Anything else naming an unknown
		// send is a replay or a forgery, and its results would say things of resources the
		// node was never sent.
		if signed == nil || !signed(rep) || rep.Generation <= n.Generation {
			return a, reportInvalid("send_id", fmt.Sprintf("send %d with generation %d and digest %s is not a declaration this controller sent to %s and signed, nor one ahead of its generation %d",
				rep.SendID, rep.Generation, rep.Digest, n.Name, n.Generation))
		}
		a.signed = true
		// What the restored database knows of the node bounds what the host can tell it.
		count, err := q.ResourceStateCountByNode(ctx, n.Name)
		if err != nil {
			return a, err
		}
		// A restored database may know fewer resources than the host applied before: the
		// results are only counted in the report line, and the body's limit bounds them.
		a.sent = max(int(count), len(rep.Results))
		return a, nil
	}
	if len(rep.Results) > a.sent {
		return a, reportInvalid("results", fmt.Sprintf("%d results for a declaration of %d resource(s)", len(rep.Results), a.sent))
	}
	if same || rep.Generation != n.Generation {
		return a, nil
	}
	return a, s.checkDeclared(ctx, q, n.Name, rep.Results)
}

// checkDeclared refuses results for resources the node's declaration does not name. What it
// names is its modules at the revisions they are pinned at, whose resources are kept decoded:
// a few rows read rather than one per resource, as composing the declaration does.
func (s *Store) checkDeclared(ctx context.Context, q driver.Queries, node string, results []hq.Result) error {
	pins, err := q.AssignmentDeclaration(ctx, node)
	if err != nil {
		return err
	}
	declared := make(map[string]map[string]bool, len(pins))
	for _, p := range pins {
		names, err := s.resourceNames(ctx, q, p.Module, p.Revision)
		if err != nil {
			return err
		}
		declared[p.Module] = names
	}
	var errs []hq.FieldError
	for i, r := range results {
		if !declared[r.Module][r.Resource] {
			errs = append(errs, hq.FieldError{Field: fmt.Sprintf("results[%d]", i), Message: hq.Ref(r.Module, r.Resource) + " is not declared on " + node})
		}
	}
	if len(errs) > 0 {
		return &hq.Error{Code: hq.CodeInvalid, Message: fmt.Sprintf("%d result(s) for resources the declaration does not name", len(errs)), Details: errs}
	}
	return nil
}

func reportInvalid(field, msg string) error {
	return &hq.Error{Code: hq.CodeInvalid, Message: "report refused: " + msg, Details: []hq.FieldError{{Field: field, Message: msg}}}
}

// raiseGeneration moves the node's generation past one its host reports having applied. A
// node deleted and registered again, or a database restored from a backup, would otherwise
// hand out generations the host has already seen with other contents, and the host would
// rightly refuse every one of them.
//
// Only a declaration the controller signed can do it, so no node can push its own generation
// anywhere it likes.
func raiseGeneration(ctx context.Context, q driver.Queries, n driver.Node, rep hq.Report, a answer) (bool, error) {
	// The signature binds the generation, so this is only a bound on what a controller could
	// ever have signed: far from the top, so a generation can always be bumped again.
	if !a.signed || rep.Generation <= n.Generation || rep.Generation >= math.MaxInt64/2 {
		return false, nil
	}
	rows, err := q.NodeRaiseGeneration(ctx, driver.NodeRaiseGenerationParams{Name: n.Name, Generation: rep.Generation + 1})
	return rows > 0, err
}

// record moves the resources a report describes and stores the report: a new row, or a
// repeat of the last one when the outcome is the same (failures still count as attempts).
func (s *Store) record(ctx context.Context, q driver.Queries, n driver.Node, rep hq.Report, a answer, outcome string, prev driver.Report, same bool, now time.Time) (id int64, summary string, err error) {
	rows := advanced{node: n.Name, stuck: map[string]bool{}}
	if a.known {
		if rows, err = s.advanceAll(ctx, q, n, rep, now); err != nil {
			return 0, "", err
		}
	}
	tally := hq.TallyReport(&rep, max(a.sent, len(rep.Results)), rows.isStuck)
	summary = tally.Line()
	// A repeat whose line changed (a failure that became stuck) is news: it gets a row.
	if same && prev.Summary == summary {
		id, err = prev.ID, q.ReportRepeat(ctx, driver.ReportRepeatParams{ID: prev.ID, LastAt: hq.FormatTime(now)})
	} else {
		id, err = q.ReportInsert(ctx, reportRow(n.Name, rep, outcome, summary, tally, hq.FormatTime(now)))
	}
	if err != nil {
		return 0, "", err
	}
	return id, summary, rows.write(ctx, q, id, hq.FormatTime(now))
}

// advanced holds the rows a report moves, to be written once the report row has an id.
type advanced struct {
	// changed rows are written one by one: the few that fail, hold, drift or wait.
	changed []driver.ResourceState
	// applying are the plain "applied" results (refs) that may move pending rows, in one
	// statement each for the attempted and the found; attemptedAgain counts attempts on rows
	// already applied.
	applyingAttempted, applyingFound, attemptedAgain []string
	stuck                                            map[string]bool
	node                                             string
	// rows is how many rows the node has: a list of refs against it is matched by key when
	// short, and by reading the node's rows when long (byKey).
	rows int64
	// allPending: the report applied, attempted and changed exactly the node's pending rows,
	// and there is nothing else to write (a first apply).
	allPending bool
}

func (a advanced) isStuck(ref string) bool { return a.stuck[ref] }

// byKey says whether refs of a node are found sooner by their key than by reading all of the
// node's rows. A lookup by key costs several rows' reading, so a few refs are looked up and
// many are found by reading the node's rows once; a quarter of the rows is where the two
// costs cross with room to spare (BenchmarkIngest's cases on each side show it).
func (a advanced) byKey(refs int) bool { return 4*int64(refs) < a.rows }

// advanceAll computes the next state of every resource the report can move. A report for an
// older generation than the node's describes specs that may have changed since, so it moves
// nothing. Rows that are not fine (failed, stuck, held, grouped-pending) are read, as is the
// row of every result that is more than applied; plain "applied" results are left to
// set-based statements, so the first apply of 500 resources is a few statements, not 500.
func (s *Store) advanceAll(ctx context.Context, q driver.Queries, n driver.Node, rep hq.Report, now time.Time) (advanced, error) {
	a := advanced{node: n.Name, stuck: map[string]bool{}}
	if rep.Generation != n.Generation {
		return a, nil
	}
	notFine, err := q.ResourceStateListNotFineByNode(ctx, n.Name)
	if err != nil {
		return a, err
	}
	rows := make(map[string]driver.ResourceState, len(notFine))
	for _, r := range notFine {
		rows[hq.Ref(r.Module, r.Resource)] = r
	}
	a.rows = n.ResourcesApplied + n.ResourcesPending + n.ResourcesFailed + n.ResourcesStuck + n.ResourcesHeld + n.ResourcesGroupedPending
	p := stuckPolicy{attempts: s.opt.StuckAttempts, after: s.opt.StuckAfter}
	for _, res := range rep.Results {
		// Most reports find every row fine: then a result's ref is built only when it is used.
		row, ok := driver.ResourceState{}, false
		if len(rows) > 0 {
			row, ok = rows[hq.Ref(res.Module, res.Resource)]
		}
		if !ok && plainApplied(res) {
			// Pending or applied: the statements move a pending row and leave an applied one.
			switch attempted := res.Attempted && res.Changed; {
			case attempted:
				ref := hq.Ref(res.Module, res.Resource)
				a.applyingAttempted = append(a.applyingAttempted, ref)
				a.attemptedAgain = append(a.attemptedAgain, ref)
			case n.ResourcesPending > 0:
				a.applyingFound = append(a.applyingFound, hq.Ref(res.Module, res.Resource))
			}
			continue
		}
		ref := hq.Ref(res.Module, res.Resource)
		if !ok {
			r, err := q.ResourceStateGet(ctx, driver.ResourceStateGetParams{Node: n.Name, Module: res.Module, Resource: res.Resource})
			if errors.Is(err, sql.ErrNoRows) {
				continue // not declared any more
			}
			if err != nil {
				return a, err
			}
			row = r
		}
		next := advance(row, res, now, p)
		if next != row {
			a.changed = append(a.changed, next)
		}
		// The line counts as stuck what this report leaves stuck, so the report that pushes a
		// resource over the edge says so; the host logs the line it is answered with.
		if next.State == string(hq.StateStuck) {
			a.stuck[ref] = true
		}
	}
	// Every row of the node is pending, and the report applied as many distinct declared
	// resources as there are rows: so exactly those rows.
	everyRowPending := a.rows == n.ResourcesPending
	a.allPending = everyRowPending && len(notFine) == 0 && len(a.changed) == 0 && len(a.applyingFound) == 0 &&
		len(a.applyingAttempted) == len(rep.Results) && int64(len(rep.Results)) == n.ResourcesPending
	return a, nil
}

// plainApplied reports whether a result says nothing but "applied": its row, pending or
// applied, ends applied with no error, hold or gate, which one statement can write for many.
func plainApplied(r hq.Result) bool {
	return r.Outcome == hq.StateApplied && !r.Drift && r.HoldReason == "" && r.BlockedBy == ""
}

func (a advanced) write(ctx context.Context, q driver.Queries, reportID int64, now string) error {
	report := sql.NullInt64{Int64: reportID, Valid: true}
	// Attempts on rows already applied first, so a pending row the next statement applies
	// counts its attempt once.
	if len(a.attemptedAgain) > 0 && !a.allPending {
		arg := driver.ResourceStateCountAttemptsParams{ReportID: report, Node: a.node, Refs: a.attemptedAgain}
		var err error
		if a.byKey(len(a.attemptedAgain)) {
			err = q.ResourceStateCountAttemptsByKey(ctx, arg)
		} else {
			err = q.ResourceStateCountAttempts(ctx, arg)
		}
		if err != nil {
			return err
		}
	}
	if a.allPending {
		// Every pending row of the node was applied and changed, and nothing else moves: one
		// statement over the node's pending rows, with no list to match.
		_, err := q.ResourceStateApplyAllPending(ctx, driver.ResourceStateApplyAllPendingParams{
			Since: now, Attempt: 1, ReportID: report, Node: a.node})
		if err != nil {
			return err
		}
		a.applyingAttempted = nil
	}
	for _, set := range []struct {
		refs    []string
		attempt int64
	}{{a.applyingAttempted, 1}, {a.applyingFound, 0}} {
		if len(set.refs) == 0 {
			continue
		}
		arg := driver.ResourceStateApplyPendingParams{Since: now, Attempt: set.attempt, ReportID: report, Node: a.node, Refs: set.refs}
		var err error
		if a.byKey(len(set.refs)) {
			_, err = q.ResourceStateApplyPendingByKey(ctx, arg)
		} else {
			_, err = q.ResourceStateApplyPending(ctx, arg)
		}
		if err != nil {
			return err
		}
	}
	for _, r := range a.changed {
		if err := q.ResourceStateRecord(ctx, driver.ResourceStateRecordParams{
			State: r.State, Since: r.Since, Attempts: r.Attempts, ConsecutiveFailures: r.ConsecutiveFailures,
			FailingSince: r.FailingSince, NeverApplied: r.NeverApplied, LastError: r.LastError,
			HoldReason: r.HoldReason, BlockedBy: r.BlockedBy, RetryRequested: r.RetryRequested,
			ReportID: sql.NullInt64{Int64: reportID, Valid: true}, Reason: r.Reason,
			HeldFound: r.HeldFound, HeldFoundOmitted: r.HeldFoundOmitted, Node: r.Node, Module: r.Module, Resource: r.Resource,
		}); err != nil {
			return fmt.Errorf("%s/%s: %w", r.Module, r.Resource, err)
		}
	}
	return nil
}

// sameOutcome reports whether a report says what the node's last report said: then it is
// counted as a repeat of that one rather than stored again.
func sameOutcome(prev driver.Report, hasPrev bool, outcome string) bool {
	return hasPrev && prev.OutcomeDigest == outcome
}

func hasFailure(results []hq.Result) bool {
	for _, r := range results {
		if r.Outcome == hq.StateFailed {
			return true
		}
	}
	return false
}

func lastReport(ctx context.Context, q driver.Queries, n driver.Node) (driver.Report, bool, error) {
	if !n.LastReportID.Valid {
		return driver.Report{}, false, nil
	}
	r, err := q.ReportGet(ctx, n.LastReportID.Int64)
	if errors.Is(err, sql.ErrNoRows) {
		return driver.Report{}, false, nil
	}
	return r, err == nil, err
}

// recordSends moves the sends this report answers: what it applied, what that supersedes, and
// what it refused.
func recordSends(ctx context.Context, q driver.Queries, n driver.Node, rep hq.Report, a answer, at string) error {
	when := sql.NullString{String: at, Valid: true}
	if a.known {
		// Every report, not only a new generation's: a host that lost its copy is sent the
		// same declaration again, and that send is answered too. Unanswered sends are indexed.
		if err := q.SendMarkApplied(ctx, driver.SendMarkAppliedParams{Node: n.Name, Generation: rep.Generation, Digest: rep.Digest, At: when}); err != nil {
			return err
		}
	}
	// applied_generation never goes back: a host fences what is older than what it applied.
	if a.applied() && rep.Generation >= n.AppliedGeneration && (rep.Generation != n.AppliedGeneration || rep.Digest != n.AppliedDigest) {
		if err := q.NodeSetApplied(ctx, driver.NodeSetAppliedParams{Name: n.Name, AppliedGeneration: rep.Generation, AppliedDigest: rep.Digest, AppliedAt: when}); err != nil {
			return err
		}
		if err := q.SendMarkSuperseded(ctx, driver.SendMarkSupersededParams{Node: n.Name, Generation: rep.Generation, At: when}); err != nil {
			return err
		}
	}
	if rep.Refused == nil {
		return nil
	}
	return recordRefusal(ctx, q, n.Name, *rep.Refused, at)
}

func recordRefusal(ctx context.Context, q driver.Queries, node string, r hq.Refusal, at string) error {
	// The same declaration refused before: a report posted again after a lost answer, or the
	// same replay again. The row that says so is there already.
	if seen, err := q.SendRefusedExists(ctx, driver.SendRefusedExistsParams{Node: node, Generation: r.Generation, Digest: r.Digest}); err != nil || seen {
		return err
	}
	when := sql.NullString{String: at, Valid: true}
	reason := firstLine(r.Reason)
	if r.SendID > 0 {
		n, err := q.SendMarkRefused(ctx, driver.SendMarkRefusedParams{Node: node, ID: r.SendID, At: when, Reason: reason})
		if err != nil || n > 0 {
			return err
		}
	}
	// The row is dated when the declaration reached the host and was refused; what it claims
	// of itself (its composer) is kept, and the reason says whether this database sent it.
	row := driver.SendInsertRefusedParams{Node: node, Generation: r.Generation, Digest: r.Digest, At: when, SentAt: at,
		ComposedBy: cmp.Or(r.ComposedBy, "unknown"), Reason: "no such send recorded: " + reason}
	if orig, err := q.SendGet(ctx, driver.SendGetParams{Node: node, ID: r.SendID}); err == nil && orig.Digest == r.Digest {
		// A send that was answered before has come back: a replay of it.
		row.ComposedBy, row.Resources = orig.ComposedBy, orig.Resources
		row.Reason = fmt.Sprintf("replay of send %d: %s", orig.ID, reason)
	} else if !errors.Is(err, sql.ErrNoRows) && err != nil {
		return err
	}
	_, err := q.SendInsertRefused(ctx, row)
	return err
}

// nodeFlags lists the node's stuck resources and the retries to hand it, clearing those.
func nodeFlags(ctx context.Context, q driver.Queries, node string) (stuck, retry []string, err error) {
	rows, err := q.ResourceStateListStuckByNode(ctx, node)
	if err != nil {
		return nil, nil, err
	}
	stuck, retry = make([]string, len(rows)), []string{}
	for i, r := range rows {
		stuck[i] = hq.Ref(r.Module, r.Resource)
	}
	rs, err := q.ResourceStateRetryList(ctx, node)
	if err != nil || len(rs) == 0 {
		return stuck, retry, err
	}
	for _, r := range rs {
		retry = append(retry, hq.Ref(r.Module, r.Resource))
	}
	return stuck, retry, q.ResourceStateClearRetry(ctx, node)
}

func reportRow(node string, rep hq.Report, outcome, summary string, t hq.Tally, at string) driver.ReportInsertParams {
	held := t.Held.Total()
	return driver.ReportInsertParams{
		Node: node, Generation: rep.Generation, Digest: rep.Digest, Summary: summary, OutcomeDigest: outcome,
		Applied: int64(t.Applied), Failed: int64(t.Failed), Stuck: int64(t.Stuck), Held: int64(held),
		GroupedPending: int64(t.GroupedPending), Pending: int64(t.Pending),
		StartedAt: optTime(rep.StartedAt), FinishedAt: optTime(rep.FinishedAt), At: at,
	}
}

func optInt(p *int64) sql.NullInt64 {
	if p == nil {
		return sql.NullInt64{}
	}
	return sql.NullInt64{Int64: *p, Valid: true}
}

func optTime(t time.Time) sql.NullString {
	if t.IsZero() {
		return sql.NullString{}
	}
	return sql.NullString{String: hq.FormatTime(t), Valid: true}
}

// OutcomeDigest identifies what a report says, leaving out timings and whether a failure was
// attempted again or skipped by back-off, so two reports that say the same thing have the same
// digest, and a stuck resource does not add a row per attempt. It hashes the fields directly, each string prefixed by
// its length so no two different reports can run together into the same bytes; this runs for
// every report, and marshalling the results to JSON first cost more than the rest of ingest.
func OutcomeDigest(rep hq.Report) string {
	h := sha256.New()
	// Written to the hash a few kilobytes at a time (below), so that is all it needs.
	buf := make([]byte, 0, 4096+512)
	str := func(s string) {
		buf = binary.AppendUvarint(buf, uint64(len(s)))
		buf = append(buf, s...)
	}
	flag := func(b bool) {
		if b {
			buf = append(buf, 1)
		} else {
			buf = append(buf, 0)
		}
	}
	buf = binary.AppendVarint(buf, rep.Generation)
	str(rep.Digest)
	if f := rep.Refused; f != nil {
		flag(true)
		buf = binary.AppendVarint(buf, f.Generation)
		buf = binary.AppendVarint(buf, f.SendID)
		str(f.Digest)
		str(f.Reason)
	} else {
		flag(false)
	}
	// Only a report that carries one: the digests of every other report stay what they were.
	if tr := rep.Transport; tr != nil {
		str("transport")
		str(hq.FormatTime(tr.From))
		str(hq.FormatTime(tr.To))
		str(tr.Reason)
	}
	for _, r := range rep.Results {
		str(r.Module)
		str(r.Resource)
		str(string(r.Outcome))
		str(r.Error)
		str(r.HoldReason)
		str(r.BlockedBy)
		flag(r.Changed)
		flag(r.Drift)
		if r.Note != "" { // only then: the digests of reports without notes stay what they were
			str("note")
			str(r.Note)
		}
		// What a held file holds is news when it changes: the node's page previews Take with it.
		if f := r.HeldFound; f != nil {
			str("held_found")
			str(f.Text)
			str(f.Omitted)
		}
		// A container's status is part of what a report says: one that changed is written
		// (recordContainers), and one that did not keeps the report a repeat.
		if c := r.Container; c != nil {
			str("container")
			str(c.ID)
			str(c.ImageDigest)
			str(hq.FormatTime(c.StartedAt))
			buf = binary.AppendVarint(buf, c.Restarts)
			str(c.Health)
			str(c.Spec)
			flag(c.EarlierSpec)
		}
		if len(buf) > 4096 {
			h.Write(buf)
			buf = buf[:0]
		}
	}
	h.Write(buf)
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}
