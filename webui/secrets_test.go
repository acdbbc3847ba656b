package webui

import (
	"context"
	"testing"

	"github.com/meshhq/hq"
)

// /secrets lists each secret with its version, digest prefix and use, linked from the nav,
// and never its value.
func TestSecretsPageShowsNoValue(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	const marker = "marker-9d4e17"
	for _, v := range []string{marker + "-v1", marker + "-v2"} {
		if _, err := b.store.PutSecret(ctx, "app/db", []byte(v)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := b.store.PutSecret(ctx, "tls/key", []byte(marker+"-tls")); err != nil {
		t.Fatal(err)
	}
	b.node(t, "web-1")
	b.module(t, "app", hq.Resource{Name: "conf", Kind: hq.KindFile, Path: "/etc/app.conf", Content: "{{.Secrets.app_db}}\n"})
	b.assign(t, "web-1", "app")
	v, err := b.store.Secret(ctx, "app/db")
	if err != nil {
		t.Fatal(err)
	}
	body := getOK(t, b, "/secrets")
	wantAll(t, "/secrets", body, `<a href="/secrets" class="here">secrets</a>`, `<td class="mono">app/db</td>`, "v2 (2 version(s))",
		v.Digest[len("sha256:"):]+"…", `<a href="/modules/app">app</a>`, "1 node(s)", `<td class="mono">tls/key</td>`)
	wantNone(t, "/secrets", body, marker)
	wantAll(t, "the nav of /modules", getOK(t, b, "/modules"), `<a href="/secrets">secrets</a>`)
}
