package driver

import (
	"context"
	"database/sql"
)

// SteadyReports is what the queries of an engine implement when they can take a steady report
// in one statement, saving the round trips of taking it statement by statement. A steady
// report answers a send recorded for the node (SendID, Generation, Digest, Signature, and no
// more results than it declared), says what the node's last report said (Outcome), leaves the
// node's applied declaration where it is, and has no failure, drift, refusal or host facts: the
// store asks only of those it has checked for the last four.
type SteadyReports interface {
	// ReportSteady takes the report as the store's general path would: the node's last report
	// counted once more, the node's last report time, the send marked applied, the retries
	// asked for the node cleared. When the report is not steady in the database's eyes it
	// changes nothing and returns Taken false.
	ReportSteady(ctx context.Context, arg ReportSteadyParams) (ReportSteadyRow, error)
	// ReportsSteady takes several steady reports, of distinct nodes, in one statement, each as
	// ReportSteady would: a row answers each, in the order of args.
	ReportsSteady(ctx context.Context, args []ReportSteadyParams) ([]ReportSteadyRow, error)
	// ReportSettled takes a report whose every result is a plain "applied" (Attempt 1 when
	// every one was attempted and changed, 0 when none was), and whose results the caller has
	// checked name every resource of the declaration Digest once, for the node's declaration,
	// when the node's resources are all pending or all applied: a first apply, or the report
	// after one. A repeat of the node's last report is
	// taken as ReportSteady takes it. Otherwise it writes what the general path writes: a new
	// report row with Summary (worked out by the store), the pending resources applied, the
	// node's last report, the send marked applied, and the node's applied declaration moved
	// when the report applies a newer one. Any other report changes nothing: Taken false.
	ReportSettled(ctx context.Context, arg ReportSettledParams) (ReportSteadyRow, error)
	// ReportsSettled takes several such reports, of distinct nodes, in one statement, each as
	// ReportSettled would: a row answers each, in the order of args.
	ReportsSettled(ctx context.Context, args []ReportSettledParams) ([]ReportSteadyRow, error)
}

type ReportSettledParams struct {
	Node       string
	TokenHash  string
	IfMatch    sql.NullInt64
	SendID     int64
	Generation int64
	Digest     string
	Signature  string
	Outcome    string
	// Results is how many results there are: one for each resource of the declaration.
	Results    int64
	Attempt    int64
	Summary    string
	StartedAt  sql.NullString
	FinishedAt sql.NullString
	At         string
}

type ReportSteadyParams struct {
	Node string
	// TokenHash, when not empty, is the hash of the token the report came with: a report whose
	// node's token is another is not taken.
	TokenHash  string
	IfMatch    sql.NullInt64
	SendID     int64
	Generation int64
	Digest     string
	Signature  string
	Outcome    string
	Results    int64
	At         string
}

// ReportSteadyRow is a steady report taken: the report row it repeats, the node's generation,
// and its stuck resources and the retries to hand it (refs, module/resource, in order).
type ReportSteadyRow struct {
	Taken      bool
	ReportID   int64
	Summary    string
	Generation int64
	Stuck      []string
	Retry      []string
}

// SteadyContext is what the queries of an engine implement when a steady report is best taken
// statement by statement in this process, its statements costing no round trip (SQLite): the
// store then takes it in one read and two writes (db/steady.go), where the general path runs
// eight statements.
type SteadyContext interface {
	// ReportSteadyContext reads what a steady report is checked against; sql.ErrNoRows when
	// the node is not registered or has no report yet.
	ReportSteadyContext(ctx context.Context, arg ReportSteadyContextParams) (ReportSteadyContextRow, error)
}

type ReportSteadyContextParams struct {
	Node       string
	SendID     int64
	Generation int64
	Digest     string
	Signature  string
	Results    int64
}

// ReportSteadyContextRow is the node, its last report, and: whether the report's send is
// recorded for the node with its generation, digest and signature, not refused, and declared
// at least Results resources (SendKnown); whether sends of the declaration await an answer
// (SendUnanswered); whether the node has stuck resources or retries asked (AnyStuck, AnyRetry).
type ReportSteadyContextRow struct {
	TokenHash         string
	Generation        int64
	AppliedGeneration int64
	AppliedDigest     string
	ReportID          int64
	Summary           string
	OutcomeDigest     string
	SendKnown         bool
	SendUnanswered    bool
	AnyStuck          bool
	AnyRetry          bool
}
