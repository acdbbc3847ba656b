package drivertest

import (
	"maps"
	"slices"
	"strings"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/seal"
)

// secrets: a version is kept and shown without its value, pinned by a revision, sealed to the
// node that uses it alone and to its key, the same seal every compose, and moved on by a new
// version as a new revision; a secret in use is not deleted.
func secrets(a *area) {
	s := a.s
	const marker = "marker-7f3a9c"
	_, err := s.PutSecret(a.ctx, "app/db", []byte(marker+"-v1"))
	a.ok("put app/db", err)
	_, err = s.PutSecret(a.ctx, "App/DB", []byte("x"))
	a.refused("a bad name", err, hq.CodeInvalid)
	_, err = s.PutSecret(a.ctx, "app_db", []byte("x"))
	a.refused("a name with another's template key", err, hq.CodeConflict)
	_, err = s.PutModule(a.ctx, "bad", []hq.Resource{{Name: "c", Kind: hq.KindFile, Path: "/etc/c", Content: "{{.Secrets.nope}}"}})
	a.refused("a template of a secret that does not exist", err, hq.CodeInvalid)

	a.register(nil, "web-1", "web-2")
	conf := hq.Resource{Name: "db.conf", Kind: hq.KindFile, Path: "/etc/db.conf", Content: "password={{.Secrets.app_db}} on {{.Node}}\n"}
	a.put("app", conf)
	a.put("other", file("plain.conf", "x\n"))
	_, err = s.Assign(a.ctx, "web-1", "app", nil, nil)
	a.ok("assign app", err)
	_, err = s.Assign(a.ctx, "web-2", "other", nil, nil)
	a.ok("assign other", err)

	v, err := s.Secret(a.ctx, "app/db")
	a.ok("show app/db", err)
	a.is("the secret's use", []any{v.Version, v.Modules, v.Nodes, len(v.Versions)}, []any{int64(1), []string{"app"}, int64(1), 1})
	a.is("its digest's prefix", len(v.Digest), len("sha256:")+8)

	d, err := s.Compose(a.ctx, "web-1", "test")
	a.ok("compose web-1", err)
	a.is("nothing sealed before the node has a key", d.Secrets, map[string]string(nil))
	got := d.Modules[0].Resources[0]
	a.is("the content as hostd renders it", got.Content, "password={{.Secrets.app_db}} on web-1\n")
	a.is("the pin and the mode", []any{got.SecretPins, got.Mode}, []any{map[string]int64{"app/db": 1}, "0600"})

	k1, _ := seal.NewKey()
	k2, _ := seal.NewKey()
	changed, err := s.SetNodeSecretsKey(a.ctx, "web-1", k1.Public())
	a.ok("register web-1's key", err)
	a.is("a new key changes", changed, true)
	_, err = s.SetNodeSecretsKey(a.ctx, "web-2", k2.Public())
	a.ok("register web-2's key", err)
	_, err = s.SetNodeSecretsKey(a.ctx, "web-2", "not a key")
	a.refused("a key that is not one", err, hq.CodeInvalid)
	d, err = s.Compose(a.ctx, "web-1", "test")
	a.ok("compose web-1 with its key", err)
	sealed := d.Secrets["app/db@1"]
	opened, err := k1.Open(sealed)
	a.ok("web-1 opens its value", err)
	a.is("the value", string(opened), marker+"-v1")
	if _, err := k2.Open(sealed); err == nil {
		a.t.Error("another node's key opens web-1's value")
	}
	again, err := s.Compose(a.ctx, "web-1", "test")
	a.ok("compose again", err)
	a.is("one digest for one declaration", again.Digest, d.Digest)
	d2, err := s.Compose(a.ctx, "web-2", "test")
	a.ok("compose web-2", err)
	a.is("a node that uses no secret gets none", d2.Secrets, map[string]string(nil))

	res, err := s.PutSecret(a.ctx, "app/db", []byte(marker+"-v2"))
	a.ok("put v2", err)
	a.is("a new version is a new revision of each module that uses it", res.Modules, map[string]int64{"app": 2})
	d, err = s.Compose(a.ctx, "web-1", "test")
	a.ok("compose after v2", err)
	a.is("v2 pinned and sealed", slices.Sorted(maps.Keys(d.Secrets)), []string{"app/db@2"})
	err = s.DeleteSecret(a.ctx, "app/db")
	a.refused("a secret in use", err, hq.CodeConflict)

	list, err := s.Secrets(a.ctx)
	a.ok("list", err)
	for _, x := range list {
		if strings.Contains(x.Label(), marker) {
			a.t.Error("a view holds the value")
		}
	}
	a.is("listed", len(list), 1)
}
