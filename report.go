package hq

import (
	"encoding/json"
	"time"

	"github.com/meshhq/hq/keys"
)

// Declaration is what a node must be at a generation. The controller composes it; hostd
// verifies its digest (and signature) before it applies anything.
type Declaration struct {
	Node       string           `json:"node"`
	Generation int64            `json:"generation"`
	Modules    []DeclaredModule `json:"modules"`
	// Digest covers Node, Generation and Modules; see ComputeDigest.
	Digest string `json:"digest"`
	// Signature is the controller's ed25519 signature over
	// keys.DeclarationStatement(Node, Generation, Digest), base64; empty when unsigned.
	Signature string `json:"signature,omitempty"`
	// Key is the public key (base64) the declaration is signed with, and KeyChain the vouches
	// that lead to it from the keys the controller rotated away from and still honours, oldest
	// first. Both stay out of the digest, as delivery details do: the digest is what is
	// declared, the fence compares it at one generation, and the controller records it when it
	// composes, before it signs. Were the key in it, a rotation would give generation G a second
	// digest and every host would refuse its re-send. Nothing in them needs the digest's cover
	// either: a host trusts Key only when it holds it or KeyChain leads to it from the key it
	// holds, each link signed by the key before it.
	Key        string       `json:"key,omitempty"`
	KeyChain   []keys.Vouch `json:"key_chain,omitempty"`
	SendID     int64        `json:"send_id"`
	ComposedBy string       `json:"composed_by"`
	ComposedAt time.Time    `json:"composed_at"`
	// Retry names resources (module/name) whose back-off the host should drop.
	Retry []string `json:"retry,omitempty"`
}

// DeclaredModule is one assigned module at the revision the declaration was composed from.
type DeclaredModule struct {
	Name      string     `json:"name"`
	Revision  int64      `json:"revision"`
	Taken     bool       `json:"taken"`
	Resources []Resource `json:"resources"`
}

// ComputeDigest returns the digest of what the declaration declares; delivery details
// (send id, composer, retries) are left out so a re-send of the same state has the same digest.
func (d *Declaration) ComputeDigest() string {
	b, err := json.Marshal(struct {
		Node       string           `json:"node"`
		Generation int64            `json:"generation"`
		Modules    []DeclaredModule `json:"modules"`
	}{d.Node, d.Generation, d.Modules})
	if err != nil {
		panic("hq: declaration does not marshal: " + err.Error())
	}
	return digest(b)
}

// ResourceCount is the number of resources declared.
func (d *Declaration) ResourceCount() int {
	n := 0
	for _, m := range d.Modules {
		n += len(m.Resources)
	}
	return n
}

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
	// Note is what hostd did that the report line says on its own: a container recreated and
	// what of its spec changed, a volume whose host path moved with nothing copied.
	Note       string `json:"note,omitempty"`
	DurationMS int64  `json:"duration_ms"`
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
