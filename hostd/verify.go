package hostd

import (
	"crypto/ed25519"
	"encoding/base64"
	"errors"
	"fmt"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/keys"
)

// Verify checks that d is for node, that its digest covers what it declares and that the
// controller signed it with the key held, or with a key d's chain vouches for from the key
// held. It returns the keys to adopt, in order, the last the one d is signed with: none when
// the key held signed it. A declaration that fails is never applied; without a key nothing
// verifies.
func Verify(d *hq.Declaration, node string, held ed25519.PublicKey) (adopt []ed25519.PublicKey, err error) {
	if len(held) != ed25519.PublicKeySize {
		return nil, errors.New("no controller key is pinned: nothing unsigned is applied")
	}
	if d.Node != node {
		return nil, fmt.Errorf("declaration is for node %q, not %q", d.Node, node)
	}
	if got := d.ComputeDigest(); got != d.Digest {
		return nil, fmt.Errorf("digest %s does not match the declaration's content (%s)", d.Digest, got)
	}
	if d.Signature == "" {
		return nil, errors.New("declaration is not signed")
	}
	sig, err := base64.StdEncoding.DecodeString(d.Signature)
	if err != nil {
		return nil, fmt.Errorf("signature is not standard base64: %w", err)
	}
	statement := keys.DeclarationStatement(d.Node, d.Generation, d.Digest)
	if ed25519.Verify(held, statement, sig) {
		return nil, nil
	}
	return verifyRotated(d, held, statement, sig)
}

// verifyRotated checks a declaration not signed by the key held: it must be signed by the key
// it names, and its chain must lead to that key from the key held.
func verifyRotated(d *hq.Declaration, held ed25519.PublicKey, statement, sig []byte) ([]ed25519.PublicKey, error) {
	offered, err := parseKey(d.Key)
	if d.Key == "" || err != nil || offered.Equal(held) {
		return nil, fmt.Errorf("signature does not verify with the pinned controller key %s", keyFingerprint(held))
	}
	if !ed25519.Verify(offered, statement, sig) {
		return nil, fmt.Errorf("signature does not verify with the key it names (%s), nor with the key held (%s)", keyFingerprint(offered), keyFingerprint(held))
	}
	followed, err := keys.Followed(held, d.KeyChain)
	if err != nil {
		return nil, fmt.Errorf("signed by key %s, which the key held (%s) does not vouch for: %w", keyFingerprint(offered), keyFingerprint(held), err)
	}
	if last := followed[len(followed)-1]; !last.Equal(offered) {
		return nil, fmt.Errorf("signed by key %s, but the key chain from the key held (%s) leads to %s", keyFingerprint(offered), keyFingerprint(held), keyFingerprint(last))
	}
	return followed, nil
}

// Fence refuses a declaration older than the one last applied (generation, digest), or one that
// claims the same generation with other content: a controller working from a stale view must not
// roll the machine back.
func Fence(d *hq.Declaration, generation int64, digest string) error {
	switch {
	case d.Generation < generation:
		return fmt.Errorf("generation %d is older than applied generation %d", d.Generation, generation)
	case d.Generation == generation && digest != "" && d.Digest != digest:
		return fmt.Errorf("generation %d has digest %s, but applied generation %d has digest %s", d.Generation, d.Digest, generation, digest)
	}
	return nil
}

// Refuse describes a refused declaration for the next report.
func Refuse(d *hq.Declaration, reason error) *hq.Refusal {
	return &hq.Refusal{
		Generation: d.Generation,
		Digest:     d.Digest,
		SendID:     d.SendID,
		ComposedBy: d.ComposedBy,
		ComposedAt: d.ComposedAt,
		Reason:     reason.Error(),
	}
}
