package hostd

import (
	"crypto/ed25519"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/keys"
)

func TestFenceRefusesOlderAndConflictingDeclarations(t *testing.T) {
	b := setup(t)
	d1 := b.decl(mod("app", false, file("conf", "/etc/app.conf", "v1")))
	d2 := b.decl(mod("app", false, file("conf", "/etc/app.conf", "v2")))
	b.reconcile(d2)

	if err := b.eng.Admit(d1); err == nil || err.Error() != "generation 1 is older than applied generation 2" {
		t.Fatalf("older generation: %v", err)
	}
	other := &hq.Declaration{Node: "web-1", Generation: 2, Modules: d1.Modules}
	other.Digest = other.ComputeDigest()
	if err := b.eng.Admit(other); err == nil || !strings.HasPrefix(err.Error(), "generation 2 has digest "+other.Digest+", but applied generation 2 has digest "+d2.Digest) {
		t.Fatalf("same generation, other digest: %v", err)
	}
	resend := *d2
	resend.SendID = 99
	if err := b.eng.Admit(&resend); err != nil {
		t.Fatalf("a re-send of the applied declaration: %v", err)
	}
	d3 := b.decl(d2.Modules...)
	if err := b.eng.Admit(d3); err != nil {
		t.Fatalf("newer generation: %v", err)
	}

	// The fence holds across a restart.
	b.restart()
	if err := b.eng.Admit(d1); err == nil {
		t.Fatal("an older declaration was admitted after a restart")
	}
	r := Refuse(d1, b.eng.Admit(d1))
	if r.Generation != 1 || r.Digest != d1.Digest || r.SendID != d1.SendID || r.ComposedBy != "test" || r.Reason == "" {
		t.Fatalf("refusal %+v", r)
	}
}

func TestVerify(t *testing.T) {
	pub, priv, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	otherPub, _, _ := ed25519.GenerateKey(nil)
	signed := func() *hq.Declaration {
		d := &hq.Declaration{Node: "web-1", Generation: 3, Modules: []hq.DeclaredModule{mod("app", false, file("a", "/a", "x"))}}
		d.Digest = d.ComputeDigest()
		d.Signature = base64.StdEncoding.EncodeToString(ed25519.Sign(priv, keys.DeclarationStatement(d.Node, d.Generation, d.Digest)))
		return d
	}
	if adopt, err := Verify(signed(), "web-1", pub); err != nil || adopt != nil {
		t.Fatalf("a good signed declaration: %v, adopt %d keys", err, len(adopt))
	}
	for name, c := range map[string]struct {
		change func(*hq.Declaration)
		key    ed25519.PublicKey
		want   string
	}{
		"tampered content": {func(d *hq.Declaration) { d.Modules[0].Resources[0].Content = "evil" }, pub, "does not match"},
		"wrong digest":     {func(d *hq.Declaration) { d.Digest = "sha256:00" }, pub, "does not match"},
		"other node":       {func(d *hq.Declaration) { d.Node = "web-2" }, pub, `for node "web-2"`},
		"unsigned":         {func(d *hq.Declaration) { d.Signature = "" }, pub, "not signed"},
		// Without a pinned key nothing verifies, however well formed: nothing unsigned applies.
		"no key pinned":    {func(d *hq.Declaration) {}, nil, "no controller key is pinned"},
		"no key, unsigned": {func(d *hq.Declaration) { d.Signature = "" }, nil, "no controller key is pinned"},
		"bad signature":    {func(d *hq.Declaration) {}, otherPub, "does not verify"},
		"not base64":       {func(d *hq.Declaration) { d.Signature = "%%%" }, pub, "not standard base64"},
		"re-signed content": {func(d *hq.Declaration) {
			d.Generation = 9
			d.Digest = d.ComputeDigest()
		}, pub, "does not verify"},
	} {
		d := signed()
		c.change(d)
		if _, err := Verify(d, "web-1", c.key); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error with %q", name, err, c.want)
		}
	}
}

// TestFenceIsSavedBeforeANewDeclarationApplies: a declaration whose generation cannot be made
// durable is not applied (a restart would otherwise admit an older one over what it changed),
// and every resource says why; the next reconcile tries again.
func TestFenceIsSavedBeforeANewDeclarationApplies(t *testing.T) {
	b := setup(t)
	d1 := b.decl(mod("app", false, file("conf", "/etc/app.conf", "v1")))
	b.reconcile(d1).want(t, "app/conf", hq.StateApplied, true, true)

	// A directory where the ledger is renamed into place makes saving it fail, even as root.
	ledger := filepath.Join(b.state, ledgerFile)
	if err := os.Remove(ledger); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(ledger, "in-the-way"), 0o700); err != nil {
		t.Fatal(err)
	}
	d2 := b.decl(mod("app", false, file("conf", "/etc/app.conf", "v2")))
	r := b.reconcile(d2).want(t, "app/conf", hq.StateFailed, false, false)
	if !strings.Contains(r.Error, "the ledger could not be saved") {
		t.Fatalf("error %q", r.Error)
	}
	if got := b.read("/etc/app.conf"); got != "v1" {
		t.Fatalf("applied without a durable fence: %q", got)
	}
	if g, _ := b.eng.Applied(); g != 1 {
		t.Fatalf("applied generation %d, want 1", g)
	}

	if err := os.RemoveAll(ledger); err != nil {
		t.Fatal(err)
	}
	b.reconcile(d2).want(t, "app/conf", hq.StateApplied, true, true)

	// A new generation that changes nothing on the machine is a fence all the same.
	d3 := b.decl(d2.Modules...)
	b.reconcile(d3).want(t, "app/conf", hq.StateApplied, true, false)
	b.restart()
	if g, dg := b.eng.Applied(); g != 3 || dg != d3.Digest {
		t.Fatalf("after a restart the fence is generation %d (%s), want 3", g, dg)
	}
	if err := b.eng.Admit(d2); err == nil {
		t.Fatal("an older declaration was admitted after a restart")
	}
}

// A declaration signed by a key other than the one held verifies only when its chain leads to
// that key from the one held; the refusal names the key offered and the key held.
func TestVerifyFollowsTheKeyChain(t *testing.T) {
	k1, k2, k3, stranger := newTestKey(t), newTestKey(t), newTestKey(t), newTestKey(t)
	pub := func(k ed25519.PrivateKey) ed25519.PublicKey { return k.Public().(ed25519.PublicKey) }
	v12, v23 := keys.NewVouch(k1, pub(k2)), keys.NewVouch(k2, pub(k3))
	signedBy := func(k ed25519.PrivateKey, chain ...keys.Vouch) *hq.Declaration {
		d := &hq.Declaration{Node: "web-1", Generation: 3, Modules: []hq.DeclaredModule{mod("app", false, file("a", "/a", "x"))}}
		d.Digest = d.ComputeDigest()
		d.Signature = base64.StdEncoding.EncodeToString(ed25519.Sign(k, keys.DeclarationStatement(d.Node, d.Generation, d.Digest)))
		d.Key, d.KeyChain = base64.StdEncoding.EncodeToString(pub(k)), chain
		return d
	}
	adopt, err := Verify(signedBy(k3, v12, v23), "web-1", pub(k1))
	if err != nil || len(adopt) != 2 || !adopt[0].Equal(pub(k2)) || !adopt[1].Equal(pub(k3)) {
		t.Fatalf("K1 to K3 through K2: %v, adopt %d keys", err, len(adopt))
	}
	if adopt, err := Verify(signedBy(k3, v12, v23), "web-1", pub(k3)); err != nil || adopt != nil {
		t.Fatalf("signed by the key held, with a chain: %v, adopt %d keys", err, len(adopt))
	}
	fp := keyFingerprint
	for name, c := range map[string]struct {
		d    *hq.Declaration
		held ed25519.PrivateKey
		want []string
	}{
		"unvouched key":   {signedBy(stranger), k1, []string{"signed by key " + fp(pub(stranger)), "key held (" + fp(pub(k1)) + ") does not vouch"}},
		"not from held":   {signedBy(k3, v23), k1, []string{fp(pub(k3)), fp(pub(k1)), "does not vouch"}},
		"wrong order":     {signedBy(k3, v23, v12), k1, []string{"out of order"}},
		"chain elsewhere": {signedBy(stranger, v12, v23), k1, []string{"leads to " + fp(pub(k3))}},
		"names another key": {func() *hq.Declaration {
			d := signedBy(stranger, v12)
			d.Key = v12.Key // says K2, is signed by another
			return d
		}(), k1, []string{"does not verify with the key it names"}},
		"forged vouch": {signedBy(k2, keys.Vouch{By: v12.By, Key: v12.Key, Signature: keys.NewVouch(stranger, pub(k2)).Signature}), k1, []string{"does not verify"}},
	} {
		if adopt, err := Verify(c.d, "web-1", pub(c.held)); err == nil || adopt != nil {
			t.Errorf("%s: verified, adopt %d keys", name, len(adopt))
		} else {
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%s: %v, want it to say %q", name, err, w)
				}
			}
		}
	}
}

func newTestKey(t *testing.T) ed25519.PrivateKey {
	t.Helper()
	_, k, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	return k
}
