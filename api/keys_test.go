package api

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"strings"
	"testing"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/keys"
)

// After a rotation the controller signs with the new key at once, says so with the chain on
// every declaration and report answer, and honours reports signed by a key in grace, not by
// one retired.
func TestRotatedKeysSignAndVerify(t *testing.T) {
	t.Parallel()
	f := setup(t)
	tok := f.node("web-1")
	f.want(f.do("PUT", "/api/v1/modules/app", admin, `{"resources":[{"name":"conf","kind":"file","path":"/a"}]}`), 201)
	f.want(f.do("PUT", "/api/v1/nodes/web-1/assignments/app", admin, nil), 200)
	k1 := f.key
	_, k2, _ := ed25519.GenerateKey(rand.Reader)
	_, k3, _ := ed25519.GenerateKey(rand.Reader)
	pub := func(k ed25519.PrivateKey) ed25519.PublicKey { return k.Public().(ed25519.PublicKey) }
	v12, v23 := keys.NewVouch(k1, pub(k2)), keys.NewVouch(k2, pub(k3))

	var d hq.Declaration
	f.want(f.do("GET", "/api/v1/nodes/web-1/declaration", tok, nil), 200).json(t, &d)
	if d.Key != base64.StdEncoding.EncodeToString(pub(k1)) || len(d.KeyChain) != 0 {
		t.Fatalf("before a rotation: key %s, chain %+v", d.Key, d.KeyChain)
	}

	f.keys.Store(NewKeys(k2, []keys.Vouch{v12}, []ed25519.PublicKey{pub(k1)}))
	f.want(f.do("GET", "/api/v1/nodes/web-1/declaration", tok, nil), 200).json(t, &d)
	sig, err := base64.StdEncoding.DecodeString(d.Signature)
	if err != nil {
		t.Fatalf("signature %q: %v", d.Signature, err)
	}
	if !ed25519.Verify(pub(k2), keys.DeclarationStatement(d.Node, d.Generation, d.Digest), sig) ||
		d.Key != v12.Key || len(d.KeyChain) != 1 || d.KeyChain[0] != v12 {
		t.Fatalf("after a rotation: key %s, chain %+v, signature by the new key: %v", d.Key, d.KeyChain, ed25519.Verify(pub(k2), keys.DeclarationStatement(d.Node, d.Generation, d.Digest), sig))
	}
	var key struct{ Key string }
	if f.want(f.do("GET", "/api/v1/controller-key", "", nil), 200).json(t, &key); key.Key != v12.Key {
		t.Fatalf("controller-key serves %s, not the new key %s", key.Key, v12.Key)
	}

	// A report of a declaration this database does not know, signed by the key in grace.
	digest := "sha256:" + strings.Repeat("ab", 32)
	unknown := func(k ed25519.PrivateKey, gen int64) hq.Report {
		return hq.Report{SendID: 99, Generation: gen, Digest: digest, Results: []hq.Result{},
			Signature: base64.StdEncoding.EncodeToString(ed25519.Sign(k, keys.DeclarationStatement("web-1", gen, digest)))}
	}
	var rr hq.ReportResponse
	f.want(f.do("POST", "/api/v1/nodes/web-1/reports", tok, unknown(k1, 10)), 200).json(t, &rr)
	if rr.Generation != 11 || rr.Key != v12.Key || len(rr.KeyChain) != 1 || rr.KeyChain[0] != v12 {
		t.Fatalf("a report signed by the key in grace: %+v", rr)
	}

	// K1 retired: its signature no longer moves anything; K2's, in grace now, does.
	f.keys.Store(NewKeys(k3, []keys.Vouch{v23}, []ed25519.PublicKey{pub(k2)}))
	f.want(f.do("POST", "/api/v1/nodes/web-1/reports", tok, unknown(k1, 20)), 422)
	f.want(f.do("POST", "/api/v1/nodes/web-1/reports", tok, unknown(k2, 20)), 200).json(t, &rr)
	if rr.Generation != 21 || rr.Key != v23.Key {
		t.Fatalf("a report signed by the key in grace after the second rotation: %+v", rr)
	}
}
