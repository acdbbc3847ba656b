package drivertest

import (
	"os"
	"strings"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/db"
	"github.com/meshhq/hq/seal"
)

// secretsRekey: a rekey gives the key file a new key and keeps the old as FILE.old; while it
// runs, the store (a controller that did not run it, and one started anew) opens versions
// encrypted to either and encrypts new ones to the new key; once every version is encrypted
// again, FILE.old goes and the new key alone opens them. A database whose key file is lost
// opens none, and says why.
func secretsRekey(a *area) {
	s := a.s
	const marker = "marker-2b81d0"
	for _, name := range []string{"app/db", "app/db", "tls/key"} {
		_, err := s.PutSecret(a.ctx, name, []byte(marker+name))
		a.ok("put "+name, err)
	}
	a.register(nil, "web-1")
	a.put("app", hq.Resource{Name: "db.conf", Kind: hq.KindFile, Path: "/etc/db.conf", Content: "{{.Secrets.app_db}} {{.Secrets.tls_key}}\n"})
	_, err := s.Assign(a.ctx, "web-1", "app", nil, nil)
	a.ok("assign", err)
	// opens says whether a node with a key never sealed to before gets every value its
	// declaration pins, which makes the store open each with the controller's key.
	opens := func(s *db.Store, what string) error {
		a.t.Helper()
		k, _ := seal.NewKey()
		_, err := s.SetNodeSecretsKey(a.ctx, "web-1", k.Public())
		a.ok("a new node key", err)
		d, err := s.Compose(a.ctx, "web-1", "test")
		if err != nil {
			return err
		}
		for ref, sealed := range d.Secrets {
			v, err := k.Open(sealed)
			if err != nil || !strings.HasPrefix(string(v), marker) {
				a.t.Errorf("%s: %s opened to %q, %v", what, ref, v, err)
			}
		}
		a.is(what+": the values sealed", len(d.Secrets), 2)
		return nil
	}
	a.ok("before the rekey", opens(s, "before the rekey"))
	old, err := seal.Read(a.secretsKey)
	a.ok("the key", err)

	to, err := seal.BeginRekey(a.secretsKey)
	a.ok("begin the rekey", err)
	again, err := seal.BeginRekey(a.secretsKey)
	a.ok("begin it again", err)
	a.is("an interrupted rekey goes on with its key", again.Public(), to.Public())
	kept, err := seal.Read(a.secretsKey + seal.OldSuffix)
	a.ok("the old key kept", err)
	a.is("FILE.old is the old key", kept.Public(), old.Public())
	// Mid-rekey: this store follows the file; one opened now reads both keys.
	a.ok("mid-rekey, the store that did not run it", opens(s, "mid-rekey"))
	restarted, err := seal.LoadKeys(a.secretsKey)
	a.ok("a controller started mid-rekey", err)
	a.is("it holds both", []string{restarted.Current().Public(), restarted.Old().Public()}, []string{to.Public(), old.Public()})
	_, err = s.PutSecret(a.ctx, "app/db", []byte(marker+"v3"))
	a.ok("a version put mid-rekey", err)

	n, err := s.RekeySecrets(a.ctx, to, 2)
	a.ok("rekey", err)
	a.is("the versions encrypted again, in chunks", n, 3)
	n, err = s.RekeySecrets(a.ctx, to, 2)
	a.ok("rekey again", err)
	a.is("nothing left", n, 0)
	a.ok("end the rekey", seal.EndRekey(a.secretsKey))
	if _, err := os.Stat(a.secretsKey + seal.OldSuffix); !os.IsNotExist(err) {
		a.t.Errorf("FILE.old after the rekey: %v", err)
	}
	a.ok("after the rekey, with the new key alone", opens(s, "after the rekey"))

	// The database without its key file: a controller makes a new key, which opens nothing.
	fresh, _ := seal.NewKey()
	copied, err := db.Open(a.ctx, a.dsn, db.Options{SecretsKey: seal.KeysOf(fresh)})
	a.ok("a store with a fresh key", err)
	defer copied.Close()
	err = opens(copied, "with a fresh key")
	a.refused("a version under a key this controller does not have", err, hq.CodeUnavailable)
	if err == nil || !strings.Contains(err.Error(), "moved without the key file") || strings.Contains(err.Error(), marker) {
		a.t.Errorf("the error of a lost key file: %v", err)
	}
	_, err = copied.RekeySecrets(a.ctx, fresh, 2)
	a.refused("a rekey without the key", err, hq.CodeUnavailable)
	a.ok("the store with the key still opens them", opens(s, "after the copy failed"))
}
