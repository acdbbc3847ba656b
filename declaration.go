package hq

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strconv"
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

// DigestOfEncoded returns what ComputeDigest returns for the declaration of node at generation
// whose modules are modules, given resources[i], the modules' resources as json.Marshal writes
// them. A controller composing a fleet's declarations encodes each revision's resources once
// rather than once a node; the rest of the digested text is written here as json.Marshal would.
func DigestOfEncoded(node string, generation int64, modules []DeclaredModule, resources [][]byte) string {
	h := sha256.New()
	b := make([]byte, 0, 256)
	b = append(b, `{"node":`...)
	b = appendJSONString(b, node)
	b = append(b, `,"generation":`...)
	b = strconv.AppendInt(b, generation, 10)
	b = append(b, `,"modules":`...)
	if modules == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i, m := range modules {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"name":`...)
			b = appendJSONString(b, m.Name)
			b = append(b, `,"revision":`...)
			b = strconv.AppendInt(b, m.Revision, 10)
			b = append(b, `,"taken":`...)
			b = strconv.AppendBool(b, m.Taken)
			b = append(b, `,"resources":`...)
			h.Write(b)
			h.Write(resources[i])
			b = append(b[:0], '}')
		}
		b = append(b, ']')
	}
	b = append(b, '}')
	h.Write(b)
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// appendJSONString appends s as json.Marshal writes a string.
func appendJSONString(b []byte, s string) []byte {
	q, err := json.Marshal(s)
	if err != nil {
		panic("hq: a string does not marshal: " + err.Error())
	}
	return append(b, q...)
}

// ResourceCount is the number of resources declared.
func (d *Declaration) ResourceCount() int {
	n := 0
	for _, m := range d.Modules {
		n += len(m.Resources)
	}
	return n
}

// SendView is one delivery of a declaration.
type SendView struct {
	ID         int64     `json:"id"`
	Generation int64     `json:"generation"`
	Digest     string    `json:"digest"`
	Resources  int64     `json:"resources"`
	ComposedBy string    `json:"composed_by"`
	SentAt     time.Time `json:"sent_at"`
	Outcome    string    `json:"outcome"`
	Reason     string    `json:"reason,omitempty"`
}

// RefusedSend is a declaration a host would not apply.
type RefusedSend struct {
	Node              string    `json:"node"`
	SendID            int64     `json:"send_id"`
	Generation        int64     `json:"generation"`
	AppliedGeneration int64     `json:"applied_generation"`
	ComposedBy        string    `json:"composed_by"`
	At                time.Time `json:"at"`
	Reason            string    `json:"reason"`
}
