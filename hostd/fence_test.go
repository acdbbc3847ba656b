package hostd

import (
	"crypto/ed25519"
	"encoding/base64"
	"strings"
	"testing"

	"github.com/meshhq/hq"
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
		d.Signature = base64.StdEncoding.EncodeToString(ed25519.Sign(priv, []byte(d.Digest)))
		return d
	}
	if err := Verify(signed(), "web-1", pub); err != nil {
		t.Fatalf("a good signed declaration: %v", err)
	}
	if err := Verify(signed(), "web-1", nil); err != nil {
		t.Fatalf("no key pinned: %v", err)
	}
	for name, c := range map[string]struct {
		change func(*hq.Declaration)
		key    ed25519.PublicKey
		want   string
	}{
		"tampered content": {func(d *hq.Declaration) { d.Modules[0].Resources[0].Content = "evil" }, nil, "does not match"},
		"wrong digest":     {func(d *hq.Declaration) { d.Digest = "sha256:00" }, nil, "does not match"},
		"other node":       {func(d *hq.Declaration) { d.Node = "web-2" }, nil, `for node "web-2"`},
		"unsigned":         {func(d *hq.Declaration) { d.Signature = "" }, pub, "not signed"},
		"bad signature":    {func(d *hq.Declaration) {}, otherPub, "does not verify"},
		"not base64":       {func(d *hq.Declaration) { d.Signature = "%%%" }, pub, "not standard base64"},
		"re-signed content": {func(d *hq.Declaration) {
			d.Generation = 9
			d.Digest = d.ComputeDigest()
		}, pub, "does not verify"},
	} {
		d := signed()
		c.change(d)
		if err := Verify(d, "web-1", c.key); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error with %q", name, err, c.want)
		}
	}
}
