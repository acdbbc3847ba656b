package hq

import (
	"bytes"
	"encoding/json"
	"fmt"
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
	// Secrets are the values of the secrets the modules' resources pin, by SecretRef
	// (name@version), each sealed to the node's own key (age, armored): what the node alone
	// can open, and only the secrets its resources use.
	Secrets map[string]string `json:"secrets,omitempty"`
	// Digest covers Node, Generation, Modules and Secrets; see ComputeDigest.
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

	// encoded keeps the modules' resources as JSON when SetDigestEncoded was given them, so
	// that AppendJSON need not encode them again; never marshalled.
	encoded *encodedModules
}

// encodedModules are the modules' resources as JSON, and the slices they were encoded from:
// an encoding is used only while each module still holds the same slice.
type encodedModules struct {
	resources [][]byte
	from      []*Resource
	lens      []int
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
		Node       string            `json:"node"`
		Generation int64             `json:"generation"`
		Modules    []DeclaredModule  `json:"modules"`
		Secrets    map[string]string `json:"secrets,omitempty"`
	}{d.Node, d.Generation, d.Modules, d.Secrets})
	if err != nil {
		panic("hq: declaration does not marshal: " + err.Error())
	}
	return digest(b)
}

// SetDigestEncoded sets d.Digest, given resources[i], the resources of d.Modules[i] as
// json.Marshal writes them, and keeps them for AppendJSON. A controller composing a fleet's
// declarations encodes each revision's resources once rather than twice for every node.
func (d *Declaration) SetDigestEncoded(resources [][]byte) {
	if len(resources) != len(d.Modules) {
		d.encoded, d.Digest = nil, d.ComputeDigest()
		return
	}
	e := &encodedModules{resources: resources, from: make([]*Resource, len(d.Modules)), lens: make([]int, len(d.Modules))}
	for i, m := range d.Modules {
		e.from[i], e.lens[i] = first(m.Resources), len(m.Resources)
	}
	d.encoded = e
	b := append([]byte(`{"node":`), jsonString(d.Node)...)
	b = append(b, `,"generation":`...)
	b = strconv.AppendInt(b, d.Generation, 10)
	b = append(b, `,"modules":`...)
	b = e.append(b, d.Modules)
	if len(d.Secrets) > 0 {
		b = append(b, `,"secrets":`...)
		b = append(b, mustJSON(d.Secrets)...)
	}
	d.Digest = digest(append(b, '}'))
}

// AppendJSON appends the declaration as json.Marshal writes it, with the modules' resources
// as SetDigestEncoded was given them while the modules hold the same resources.
func (d *Declaration) AppendJSON(b []byte) ([]byte, error) {
	if !d.encoded.holds(d.Modules) {
		j, err := json.Marshal(d)
		return append(b, j...), err
	}
	shell := *d
	shell.Modules = nil
	j, err := json.Marshal(&shell)
	if err != nil {
		return b, err
	}
	// The node is a JSON string, in which a quote is escaped: the first such text is the key.
	const key = `,"modules":null,`
	i := bytes.Index(j, []byte(key))
	if i < 0 {
		return b, fmt.Errorf("hq: a declaration marshals without its modules: %.80s", j)
	}
	i += len(key) - len("null,")
	b = append(b, j[:i]...)
	b = d.encoded.append(b, d.Modules)
	return append(b, j[i+len("null"):]...), nil
}

// holds reports whether the encoding is of modules' resources as they are.
func (e *encodedModules) holds(modules []DeclaredModule) bool {
	if e == nil || len(e.from) != len(modules) {
		return false
	}
	for i, m := range modules {
		if first(m.Resources) != e.from[i] || len(m.Resources) != e.lens[i] {
			return false
		}
	}
	return true
}

// first is the address of the first resource, by which a slice is known again; nil for none.
func first(rs []Resource) *Resource {
	if len(rs) == 0 {
		return nil
	}
	return &rs[0]
}

// append appends modules as json.Marshal writes them, their resources from the encoding.
func (e *encodedModules) append(b []byte, modules []DeclaredModule) []byte {
	if modules == nil {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for i, m := range modules {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"name":`...)
		b = append(b, jsonString(m.Name)...)
		b = append(b, `,"revision":`...)
		b = strconv.AppendInt(b, m.Revision, 10)
		b = append(b, `,"taken":`...)
		b = strconv.AppendBool(b, m.Taken)
		b = append(b, `,"resources":`...)
		b = append(b, e.resources[i]...)
		b = append(b, '}')
	}
	return append(b, ']')
}

// mustJSON is v as json.Marshal writes it, for values that always marshal.
func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic("hq: a value does not marshal: " + err.Error())
	}
	return b
}

// jsonString is s as json.Marshal writes a string.
func jsonString(s string) []byte {
	q, err := json.Marshal(s)
	if err != nil {
		panic("hq: a string does not marshal: " + err.Error())
	}
	return q
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
