// Package keys is how the controller's ed25519 signing keys are named, what they sign, and how
// a host follows a rotation: each retired key vouches for the key that replaces it, and a host
// trusts a new key only through a chain of vouches from the key it holds. It knows keys and
// statements, not declarations, so the words that carry a signature or a chain can hold its types.
package keys

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
)

// Fingerprint names a controller's public key the way ssh names keys: SHA256: and the
// unpadded base64 of the key's sha256. hq key prints it and hostd logs it when it learns a
// key, so an operator can compare the two.
func Fingerprint(key []byte) string {
	sum := sha256.Sum256(key)
	return "SHA256:" + base64.RawStdEncoding.EncodeToString(sum[:])
}

// DeclarationStatement is what the controller signs for a declaration and a host verifies: the
// node, the generation and the digest together. The digest alone covers them too, but a
// report carries the three apart, and the controller must be able to tell from the signature
// itself that it signed this generation for this node, not only this digest.
func DeclarationStatement(node string, generation int64, digest string) []byte {
	return []byte("hq declaration\n" + node + "\n" + strconv.FormatInt(generation, 10) + "\n" + digest)
}

// VouchStatement is what a signing key signs, when it is rotated, to vouch for the key that
// replaces it. Its first line differs from DeclarationStatement's, so no signature over a
// declaration can ever be taken for a vouch, nor the other way round.
func VouchStatement(next ed25519.PublicKey) []byte {
	return []byte("hq key\n" + base64.StdEncoding.EncodeToString(next))
}

// Vouch is one link of a key chain: By (base64 public key) vouches for Key (base64 public
// key) as its successor, with Signature (base64) over VouchStatement(Key). Naming the signer
// in the link lets a host find where in a chain the key it holds begins, and check that every
// link is signed by the key the link before it vouched for.
type Vouch struct {
	By        string `json:"by"`
	Key       string `json:"key"`
	Signature string `json:"signature"`
}

// NewVouch signs next as by's successor.
func NewVouch(by ed25519.PrivateKey, next ed25519.PublicKey) Vouch {
	return Vouch{
		By:        base64.StdEncoding.EncodeToString(by.Public().(ed25519.PublicKey)),
		Key:       base64.StdEncoding.EncodeToString(next),
		Signature: base64.StdEncoding.EncodeToString(ed25519.Sign(by, VouchStatement(next))),
	}
}

// MaxChain bounds the links a host follows: a controller sends only the vouches still in
// grace, a handful at most, so a longer chain is nothing a controller made.
const MaxChain = 32

// ErrNotVouched is the error when no link of a chain is signed by the key held.
var ErrNotVouched = errors.New("no vouch in the key chain is signed by the key held")

// FollowChain returns the key that chain leads to from held; see Followed.
func FollowChain(held ed25519.PublicKey, chain []Vouch) (ed25519.PublicKey, error) {
	followed, err := Followed(held, chain)
	if err != nil {
		return nil, err
	}
	return followed[len(followed)-1], nil
}

// Followed returns the keys chain leads through from held, in order, the last the one it
// leads to. The chain must hold together as a whole, each link signed by the key the link
// before it vouched for (a controller sends it so), and one link must be signed by held; links
// before held's are rotations a host followed already. A chain that does not hold together, or
// that held signs no link of, leads nowhere.
func Followed(held ed25519.PublicKey, chain []Vouch) ([]ed25519.PublicKey, error) {
	if len(chain) > MaxChain {
		return nil, fmt.Errorf("the key chain has %d links, more than %d", len(chain), MaxChain)
	}
	var prev ed25519.PublicKey
	var followed []ed25519.PublicKey
	for i, v := range chain {
		by, key, err := checkLink(prev, v)
		if err != nil {
			return nil, fmt.Errorf("key chain link %d: %w", i, err)
		}
		if followed != nil || by.Equal(held) {
			followed = append(followed, key)
		}
		prev = key
	}
	if followed == nil {
		return nil, ErrNotVouched
	}
	return followed, nil
}

// checkLink returns v's signer and the key it vouches for, if v is signed by its signer and,
// past the first link, that signer is prev, the key the link before vouched for.
func checkLink(prev ed25519.PublicKey, v Vouch) (by, key ed25519.PublicKey, err error) {
	if by, err = ParsePublic(v.By); err != nil {
		return nil, nil, fmt.Errorf("its signer: %w", err)
	}
	if prev != nil && !bytes.Equal(by, prev) {
		return nil, nil, fmt.Errorf("signed by %s, not by %s the link before vouches for (links out of order)", Fingerprint(by), Fingerprint(prev))
	}
	if key, err = ParsePublic(v.Key); err != nil {
		return nil, nil, fmt.Errorf("its key: %w", err)
	}
	sig, err := base64.StdEncoding.DecodeString(v.Signature)
	if err != nil || !ed25519.Verify(by, VouchStatement(key), sig) {
		return nil, nil, fmt.Errorf("the vouch for %s does not verify with %s", Fingerprint(key), Fingerprint(by))
	}
	return by, key, nil
}

// ParsePublic decodes a base64 (standard) ed25519 public key, as GET
// /api/v1/controller-key serves it and HOSTD_CONTROLLER_KEY takes it.
func ParsePublic(s string) (ed25519.PublicKey, error) {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("key is not standard base64: %w", err)
	}
	if len(b) != ed25519.PublicKeySize {
		return nil, fmt.Errorf("key is %d bytes, not %d", len(b), ed25519.PublicKeySize)
	}
	return ed25519.PublicKey(b), nil
}
