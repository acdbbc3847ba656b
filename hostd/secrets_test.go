package hostd

import (
	"crypto/ed25519"
	"strings"
	"testing"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/seal"
)

// A declaration captured on its way to another node and replayed here carries values sealed
// to that node's key: they do not open with this node's, so what uses them fails and nothing
// is written; without a sealed value at all, or a key, it is held. Never the plaintext.
func TestSecretsSealedToAnotherNodeAreNeverApplied(t *testing.T) {
	b := setup(t)
	mine, _ := seal.NewKey()
	theirs, _ := seal.NewKey()
	b.eng.secretsKey = mine
	const marker = "marker-51c0de"
	conf := hq.Resource{Name: "db.conf", Kind: hq.KindFile, Path: "/etc/db.conf", Mode: "0600",
		Content: "password={{.Secrets.app_db}}\n", SecretPins: map[string]int64{"app/db": 1}}
	decl := func(secrets map[string]string) *hq.Declaration {
		b.gen++
		d := &hq.Declaration{Node: "web-1", Generation: b.gen, Modules: []hq.DeclaredModule{mod("app", true, conf)},
			SendID: b.gen, ComposedBy: "test", Secrets: secrets}
		d.Digest = d.ComputeDigest()
		return d
	}
	sealedTo := func(k *seal.Key) string {
		s, err := seal.To(k.Public(), []byte(marker))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}

	// Replayed to another node as it is, it is refused before anything: it is not for it.
	captured := decl(map[string]string{"app/db@1": sealedTo(mine)})
	if _, err := Verify(captured, "web-2", make(ed25519.PublicKey, ed25519.PublicKeySize)); err == nil || !strings.Contains(err.Error(), "not \"web-2\"") {
		t.Fatalf("web-1's declaration verified for web-2: %v", err)
	}
	// Were it let through (its node rewritten, which its signature forbids), the values sealed
	// to the node it was for do not open with this one's key.
	r := b.reconcile(decl(map[string]string{"app/db@1": sealedTo(theirs)})).want(t, "app/db.conf", hq.StateFailed, true, false)
	if !strings.Contains(r.Error, "does not open with this node's key") || strings.Contains(r.Error, marker) {
		t.Fatalf("the error of another node's seal: %q", r.Error)
	}
	if b.exists("/etc/db.conf") {
		t.Fatalf("the file was written from another node's seal: %q", b.read("/etc/db.conf"))
	}
	b.reconcile(decl(nil)).want(t, "app/db.conf", hq.StateHeld, false, false)
	b.eng.secretsKey = nil
	b.reconcile(decl(map[string]string{"app/db@1": sealedTo(mine)})).want(t, "app/db.conf", hq.StateHeld, false, false)
	if b.exists("/etc/db.conf") {
		t.Fatal("a held file was written")
	}
	// Its own seal opens, and the value is where it is declared.
	b.eng.secretsKey = mine
	b.reconcile(decl(map[string]string{"app/db@1": sealedTo(mine)})).want(t, "app/db.conf", hq.StateApplied, true, true)
	if got := b.read("/etc/db.conf"); got != "password="+marker+"\n" {
		t.Fatalf("the file holds %q", got)
	}
}
