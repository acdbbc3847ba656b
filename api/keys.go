package api

import (
	"crypto/ed25519"
	"encoding/base64"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/keys"
)

// Keys is what the controller signs and verifies with at one moment: the key signing now, the
// vouches leading to it from the keys rotated away from that are still in grace, and those
// keys, whose signatures on the declarations hosts report are still the controller's own.
type Keys struct {
	Sign ed25519.PrivateKey
	// Public is Sign's public half, base64, as declarations and GET /controller-key carry it.
	Public string
	Chain  []keys.Vouch
	// Honoured are the public keys a report's signature may be by: Sign's first.
	Honoured []ed25519.PublicKey
}

// NewKeys is the keys of a controller signing with sign, whose chain leads to it from the
// keys in grace, and which still honours those.
func NewKeys(sign ed25519.PrivateKey, chain []keys.Vouch, inGrace []ed25519.PublicKey) *Keys {
	pub := sign.Public().(ed25519.PublicKey)
	return &Keys{Sign: sign, Public: base64.StdEncoding.EncodeToString(pub), Chain: chain,
		Honoured: append([]ed25519.PublicKey{pub}, inGrace...)}
}

// sign signs d with k, and says which key and which chain lead to it.
func (k *Keys) sign(d *hq.Declaration) {
	d.Signature = base64.StdEncoding.EncodeToString(ed25519.Sign(k.Sign, keys.DeclarationStatement(d.Node, d.Generation, d.Digest)))
	d.Key, d.KeyChain = k.Public, k.Chain
}

// signed reports whether sig (base64) is a signature by one of the honoured keys over statement.
func (k *Keys) signed(statement []byte, sig string) bool {
	b, err := base64.StdEncoding.DecodeString(sig)
	if err != nil {
		return false
	}
	for _, pub := range k.Honoured {
		if ed25519.Verify(pub, statement, b) {
			return true
		}
	}
	return false
}

// keys returns what the server signs with now, or nil when it does not sign.
func (s *Server) keys() *Keys {
	if s.Keys == nil {
		return nil
	}
	return s.Keys()
}
