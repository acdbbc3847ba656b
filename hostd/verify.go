package hostd

import (
	"crypto/ed25519"
	"encoding/base64"
	"errors"
	"fmt"

	"github.com/meshhq/hq"
)

// Verify checks that d is for node, that its digest covers what it declares and that the
// controller signed that digest with key. A declaration that fails is never applied; without
// a key nothing verifies.
func Verify(d *hq.Declaration, node string, key ed25519.PublicKey) error {
	if len(key) != ed25519.PublicKeySize {
		return errors.New("no controller key is pinned: nothing unsigned is applied")
	}
	if d.Node != node {
		return fmt.Errorf("declaration is for node %q, not %q", d.Node, node)
	}
	if got := d.ComputeDigest(); got != d.Digest {
		return fmt.Errorf("digest %s does not match the declaration's content (%s)", d.Digest, got)
	}
	if d.Signature == "" {
		return errors.New("declaration is not signed")
	}
	sig, err := base64.StdEncoding.DecodeString(d.Signature)
	if err != nil {
		return fmt.Errorf("signature is not standard base64: %w", err)
	}
	if !ed25519.Verify(key, hq.SignedStatement(d.Node, d.Generation, d.Digest), sig) {
		return errors.New("signature does not verify with the pinned controller key")
	}
	return nil
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
