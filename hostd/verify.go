package hostd

import (
	"crypto/ed25519"
	"encoding/base64"
	"errors"
	"fmt"

	"github.com/meshhq/hq"
)

// parseKey decodes a base64 (standard) ed25519 public key.
func parseKey(s string) (ed25519.PublicKey, error) {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("controller key is not standard base64: %w", err)
	}
	if len(b) != ed25519.PublicKeySize {
		return nil, fmt.Errorf("controller key is %d bytes, not %d", len(b), ed25519.PublicKeySize)
	}
	return ed25519.PublicKey(b), nil
}

// Verify checks that d is for node, that its digest covers what it declares and, when key is
// not nil, that the controller signed that digest. A declaration that fails is never applied.
func Verify(d *hq.Declaration, node string, key ed25519.PublicKey) error {
	if d.Node != node {
		return fmt.Errorf("declaration is for node %q, not %q", d.Node, node)
	}
	if got := d.ComputeDigest(); got != d.Digest {
		return fmt.Errorf("digest %s does not match the declaration's content (%s)", d.Digest, got)
	}
	if key == nil {
		return nil
	}
	if d.Signature == "" {
		return errors.New("declaration is not signed, but a controller key is pinned")
	}
	sig, err := base64.StdEncoding.DecodeString(d.Signature)
	if err != nil {
		return fmt.Errorf("signature is not standard base64: %w", err)
	}
	if !ed25519.Verify(key, []byte(d.Digest), sig) {
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
