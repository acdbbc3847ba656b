package hq

import (
	"fmt"
	"sync"
	"time"

	"github.com/meshhq/hq/keys"
)

// Report is what hostd POSTs after every reconcile: one result per declared resource.
type Report struct {
	// SendID, Generation, Digest and Signature name the declaration this report answers, as the
	// controller sent and signed it; a report that names no send the controller recorded moves
	// no resource rows. SendID is 0 and Signature empty when the host has applied nothing yet.
	SendID     int64     `json:"send_id"`
	Generation int64     `json:"generation"`
	Digest     string    `json:"digest"`
	Signature  string    `json:"signature"`
	StartedAt  time.Time `json:"started_at"`
	FinishedAt time.Time `json:"finished_at"`
	Refused    *Refusal  `json:"refused"`
	// Transport, when set, says the host could not talk to the controller for a while
	// because TLS failed; only the first report it could send after carries it.
	Transport *TransportRefusal `json:"transport,omitempty"`
	// Host, when set, says what the host runs. hostd sends it in its reports from its start
	// until one is taken: facts that change only with a restart are not sent on every report.
	Host    *HostFacts `json:"host,omitempty"`
	Results []Result   `json:"results"`
}

// HostFacts are what a host says of itself: the hostd it runs, its operating system and
// architecture, and when it booted (its uptime is the time since).
type HostFacts struct {
	HostdVersion string    `json:"hostd_version"`
	OS           string    `json:"os"`
	Arch         string    `json:"arch"`
	BootedAt     time.Time `json:"booted_at"`
}

// MaxHostFact bounds each text of HostFacts.
const MaxHostFact = 200

// TransportRefusal is a time the host could not talk to the controller because TLS failed (a
// certificate expired, or from a CA it does not trust, or refused by the other side): from
// the first failure to the call that went through again, by the host's clock, and why.
type TransportRefusal struct {
	From   time.Time `json:"from"`
	To     time.Time `json:"to"`
	Reason string    `json:"reason"`
}

// Refusal says which declaration the host would not apply, and why.
type Refusal struct {
	Generation int64     `json:"generation"`
	Digest     string    `json:"digest"`
	SendID     int64     `json:"send_id"`
	ComposedBy string    `json:"composed_by"`
	ComposedAt time.Time `json:"composed_at"`
	Reason     string    `json:"reason"`
}

// Result is the outcome of one resource in one reconcile.
type Result struct {
	Module     string `json:"module"`
	Resource   string `json:"resource"`
	Outcome    State  `json:"outcome"`
	Attempted  bool   `json:"attempted"`
	Changed    bool   `json:"changed"`
	Error      string `json:"error"`
	HoldReason string `json:"hold_reason"`
	BlockedBy  string `json:"blocked_by"`
	Drift      bool   `json:"drift"`
	// DriftDetail says what differed when Drift is set: "content sha256:… (want sha256:…)",
	// "mode 0600 (want 0644)", "target /a (want /b)", "missing", "service not running".
	DriftDetail string `json:"drift_detail,omitempty"`
	// DriftFound is what hostd found in a drifted file whose declared and found contents are
	// both small text (at most MaxDriftFound bytes, UTF-8 without NUL), so the controller can
	// show what changed, not only that it did.
	DriftFound string `json:"drift_found,omitempty"`
	// HeldFound is what hostd found in a file it holds, which Take would overwrite: its content
	// when it is small text, else why it is left out. nil for every other result, and from a
	// hostd that does not say.
	HeldFound *FoundFile `json:"held_found,omitempty"`
	// Note is what hostd did that the report line says on its own: a container recreated and
	// what of its spec changed, a volume whose host path moved with nothing copied.
	Note       string `json:"note,omitempty"`
	DurationMS int64  `json:"duration_ms"`
	// Container is what runs for a container resource, as hostd last saw it; nil for other
	// kinds, and for a container hostd has not created yet.
	Container *ContainerStatus `json:"container,omitempty"`
}

// FoundFile is a file as hostd found it on the machine.
type FoundFile struct {
	// Text is its content when it is small text: at most MaxDriftFound bytes, UTF-8 without NUL.
	Text string `json:"text"`
	// Omitted says why Text is left out when it is: FoundBinary, FoundTooLarge or FoundTooMany;
	// "" when Text is the file's content (which may be empty).
	Omitted string `json:"omitted,omitempty"`
}

// Why a FoundFile's content is left out: the file is not text; it is larger than
// MaxDriftFound; the report carries MaxHeldFound of held files' content already.
const (
	FoundBinary   = "binary"
	FoundTooLarge = "too-large"
	FoundTooMany  = "too-many"
)

// MaxHeldFound bounds the content of held files one report carries, all together: a host that
// holds hundreds of files still sends a report well inside the body's bound, and the node's
// answer in the API carries at most as much.
const MaxHeldFound = 256 << 10

// checkFound says what is wrong with a result's held_found; "" when nothing is.
func checkFound(r Result) string {
	f := r.HeldFound
	switch {
	case f == nil:
		return ""
	case r.Outcome != StateHeld:
		return "only a held result says what was found"
	case f.Omitted != "" && f.Omitted != FoundBinary && f.Omitted != FoundTooLarge && f.Omitted != FoundTooMany:
		return "omitted must be binary, too-large or too-many"
	case f.Omitted != "" && f.Text != "":
		return "a text whose content is omitted must be empty"
	}
	return ""
}

// ContainerStatus is what runs for a container resource: the container hostd created (or
// adopted) for it, as hostd last saw it. hostd keeps it in its ledger, so a reconcile that
// finds the container still running as recorded says it without asking the container CLI.
type ContainerStatus struct {
	// ID is the engine's id of the container.
	ID string `json:"id"`
	// ImageDigest is the digest of the image it runs (sha256:…), which hostd made sure the
	// engine holds the image by before it created the container.
	ImageDigest string `json:"image_digest"`
	// StartedAt is when its process last started; zero for a container created and not
	// started (a module not taken), or when the CLI does not say.
	StartedAt time.Time `json:"started_at,omitzero"`
	// Restarts counts the times hostd saw it restart since it was created: crashes hostd put
	// back, and restarts behind its back (the engine's restart policy, or someone's).
	Restarts int64 `json:"restarts"`
	// Health is HealthHealthy when its health check passed in the reconcile that reported
	// it, HealthUnhealthy when it did not, HealthNone when it declares none.
	Health string `json:"health"`
	// Spec is the digest of the spec the running container was made from.
	Spec string `json:"spec"`
	// EarlierSpec says what runs is not the spec declared now: a group that did not apply
	// rolled it back, or the change has not applied yet.
	EarlierSpec bool `json:"earlier_spec,omitempty"`
}

// The health a ContainerStatus may say.
const (
	HealthHealthy   = "healthy"
	HealthUnhealthy = "unhealthy"
	HealthNone      = "none"
)

// MaxContainerText bounds each text of a ContainerStatus: an id, a digest or a health.
const MaxContainerText = 200

// checkContainer says what is wrong with a result's container status; "" when nothing is.
func checkContainer(c *ContainerStatus) string {
	switch {
	case c == nil:
		return ""
	case c.ID == "" || len(c.ID) > MaxContainerText || len(c.ImageDigest) > MaxContainerText || len(c.Spec) > MaxContainerText:
		return fmt.Sprintf("needs an id, and each text at most %d bytes", MaxContainerText)
	case c.Health != HealthHealthy && c.Health != HealthUnhealthy && c.Health != HealthNone:
		return "health must be healthy, unhealthy or none"
	case c.Restarts < 0:
		return "restarts must not be negative"
	}
	return ""
}

// ReportResponse is the controller's answer to a report.
type ReportResponse struct {
	ReportID int64    `json:"report_id"`
	Summary  string   `json:"summary"`
	Stuck    []string `json:"stuck"`
	// Generation is the node's generation now: a host behind it has a declaration to fetch.
	Generation int64 `json:"generation"`
	// Retry names resources (module/name) whose back-off the host should drop.
	Retry []string `json:"retry,omitempty"`
	// Key and KeyChain are the controller's signing key now and the vouches leading to it, as
	// on a declaration: a host that holds an older key follows a rotation within one report,
	// without waiting for a new generation that may not come before the vouch retires.
	Key      string       `json:"key,omitempty"`
	KeyChain []keys.Vouch `json:"key_chain,omitempty"`
}

// ValidateReport rejects a report that could not have come from a host.
func ValidateReport(rep Report) error {
	var errs []FieldError
	if rep.Generation < 0 {
		errs = append(errs, FieldError{Field: "generation", Message: "must not be negative"})
	}
	if tr := rep.Transport; tr != nil && (tr.From.IsZero() || tr.To.Before(tr.From) || tr.Reason == "") {
		errs = append(errs, FieldError{Field: "transport", Message: "needs from, a to not before it, and a reason"})
	}
	if h := rep.Host; h != nil {
		if h.HostdVersion == "" || len(h.HostdVersion) > MaxHostFact || len(h.OS) > MaxHostFact || len(h.Arch) > MaxHostFact {
			errs = append(errs, FieldError{Field: "host", Message: fmt.Sprintf("needs a hostd_version, and each text at most %d bytes", MaxHostFact)})
		}
	}
	// Keyed by the two names, not by their joined ref: a report of 500 results would
	// otherwise build 500 strings only to look them up.
	seen := seenResults.Get().(map[[2]string]struct{})
	defer putSeenResults(seen)
	for i, r := range rep.Results {
		if !ValidName(r.Module) {
			errs = append(errs, resultError(i, "module", "is not a valid name"))
		}
		if !ValidName(r.Resource) {
			errs = append(errs, resultError(i, "resource", "is not a valid name"))
		}
		if !r.Outcome.Outcome() {
			errs = append(errs, resultError(i, "outcome", "must be applied, failed, held, grouped-pending or pending"))
		}
		if msg := checkContainer(r.Container); msg != "" {
			errs = append(errs, resultError(i, "container", msg))
		}
		if msg := checkFound(r); msg != "" {
			errs = append(errs, resultError(i, "held_found", msg))
		}
		key := [2]string{r.Module, r.Resource}
		if _, ok := seen[key]; ok {
			errs = append(errs, resultError(i, "resource", "reported twice"))
		}
		seen[key] = struct{}{}
	}
	if len(errs) > 0 {
		return &Error{Code: CodeInvalid, Message: fmt.Sprintf("%d problem(s) in the report", len(errs)), Details: errs}
	}
	return nil
}

// seenResults keeps the maps ValidateReport and TallyResults key a report's results by, for the
// next report: every report is validated and tallied, and a fresh map each time would be a
// sizeable share of what admitting a report allocates.
var seenResults = sync.Pool{New: func() any { return make(map[[2]string]struct{}, 512) }}

func putSeenResults(m map[[2]string]struct{}) {
	if len(m) > 4096 {
		return // a report far larger than a fleet's: not kept
	}
	clear(m)
	seenResults.Put(m)
}

func resultError(i int, field, msg string) FieldError {
	return FieldError{Field: fmt.Sprintf("results[%d].%s", i, field), Message: msg}
}
