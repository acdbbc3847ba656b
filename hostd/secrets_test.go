package hostd

import (
	"crypto/ed25519"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

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

// A service whose change fails in its group (which alone rolls a service back) is started
// again as it was, with the secret values it ran with then, not the new ones and not none.
func TestServiceUndoneGetsItsSecretEnvBack(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "never", http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	b := setup(t)
	key, _ := seal.NewKey()
	b.eng.secretsKey = key
	svc := func(version int64, health *hq.Health) hq.Resource {
		return hq.Resource{Name: "svc", Kind: hq.KindService, Group: "g", SecretEnv: map[string]string{"PW": "app/db"},
			SecretPins: map[string]int64{"app/db": version}, Health: health,
			Command: []string{"/bin/sh", "-c", `printf %s "$PW" > {root}/pw; exec sleep 60`}}
	}
	decl := func(r hq.Resource, version int64) *hq.Declaration {
		b.gen++
		sealed, _ := seal.To(key.Public(), []byte(fmt.Sprintf("value-v%d", version)))
		d := &hq.Declaration{Node: "web-1", Generation: b.gen, Modules: []hq.DeclaredModule{mod("app", true, r)},
			SendID: b.gen, ComposedBy: "test", Secrets: map[string]string{hq.SecretRef("app/db", version): sealed}}
		d.Digest = d.ComputeDigest()
		return d
	}
	b.reconcile(decl(svc(1, nil), 1)).want(t, "app/svc", hq.StateApplied, true, true)
	waitFor(t, 5*time.Second, "v1 in the service's environment", func() bool { return b.read("/pw") == "value-v1" })

	b.reconcile(decl(svc(2, &hq.Health{HTTP: srv.URL}), 2)).want(t, "app/svc", hq.StateFailed, true, false)
	waitFor(t, 5*time.Second, "v1 in the environment of the service started again", func() bool { return b.read("/pw") == "value-v1" })
	if p := b.eng.sup.get("app/svc"); p == nil || p.decl.SecretPins["app/db"] != 1 {
		t.Fatalf("the service running after the undo: %+v", p)
	}
}

// The secrets hostd made for one container are told apart from another's whose name starts
// alike, and from anything else in the store.
func TestPodmanSecretsOfAContainer(t *testing.T) {
	for name, want := range map[string]bool{
		"hq-app-web.app_db.v1": true, "hq-app-web.tls_key.v12": true,
		"hq-app-web.x.app_db.v1": false, "hq-app-web2.app_db.v1": false, "hq-app-web.app_db": false,
		"hq-app-web.app_db.v": false, "hq-app-web.app_db.v1x": false, "other": false,
	} {
		if got := ofContainer(name, "hq-app-web"); got != want {
			t.Errorf("ofContainer(%q) = %v", name, got)
		}
	}
	if podmanSecret("hq-app-web.next", "app/db", 3) != "hq-app-web.app_db.v3" {
		t.Error("a container made beside its old one names its secrets as the old one's")
	}
}
