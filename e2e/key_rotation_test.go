package e2e

import (
	"bytes"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/pem"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/internal/testdb"
	"github.com/meshhq/hq/keys"
)

// hqKey runs hq key with args on the key file of the database at db, as an operator would on
// the controller's machine, and returns what it printed on stdout and stderr.
func hqKey(t *testing.T, db string, args ...string) (stdout, stderr string) {
	t.Helper()
	cmd := exec.Command(filepath.Join(bin, "hq"), append([]string{"key"}, args...)...)
	cmd.Env = append(os.Environ(), dbEnv(t, db)...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		t.Fatalf("hq key %s: %v\n%s", strings.Join(args, " "), err, errOut.String())
	}
	return strings.TrimSpace(out.String()), errOut.String()
}

// keysHeld is the keys a host keeps in its state dir, oldest first.
func keysHeld(h *host) []string {
	return strings.Fields(readFile(filepath.Join(h.state, "controller.key")))
}

func fingerprint(t *testing.T, key string) string {
	t.Helper()
	k, err := keys.ParsePublic(key)
	if err != nil {
		t.Fatal(err)
	}
	return keys.Fingerprint(k)
}

// The signing key rotated under three running hosts: the controller signs with the new key
// within seconds, every host follows it (kept in its state dir, logged) and converges on the
// next revision. A fourth host, down through two rotations, follows both when it comes back.
// Then the key file is replaced by a key nothing vouches for: the controller signs with it,
// and every host refuses what it signs, applies nothing, and says so in its report, naming
// the key offered and the key held.
func TestKeyRotationUnderRunningHosts(t *testing.T) {
	db := testdb.New(t)
	ctl := startController(t, db)
	c := newClient(t, ctl.url)
	first := controllerKey(t, ctl.url)
	var hosts []*host
	for _, node := range []string{"k1", "k2", "k3"} {
		hosts = append(hosts, newHost(t, c, ctl.url, node))
	}
	sleeperToken := c.register("sleeper")
	dir := t.TempDir()
	sleeperRoot, sleeperState := filepath.Join(dir, "root"), filepath.Join(dir, "state")
	os.MkdirAll(sleeperRoot, 0o755)
	sleeper := startHost(t, ctl.url, "sleeper", sleeperToken, sleeperRoot, sleeperState)
	motd := func(content string) hq.Resource {
		return hq.Resource{Name: "motd", Kind: hq.KindFile, Path: "/etc/motd", Content: content}
	}
	converged := func(what, content string, hosts ...*host) {
		t.Helper()
		for _, h := range hosts {
			waitFor(t, 20*time.Second, h.node+" converged on "+what, func() bool {
				return c.node(h.node).Status == hq.StatusConverged && readFile(filepath.Join(h.root, "etc/motd")) == content
			})
		}
	}
	c.putModule("motd", motd("before\n"))
	for _, h := range append(hosts, sleeper) {
		c.assign(h.node, "motd", false)
	}
	converged("the first revision", "before\n", append(hosts, sleeper)...)
	sleeper.stop()

	rotated, stderr := hqKey(t, db, "rotate")
	if rotated == first || !strings.Contains(stderr, "fingerprint "+fingerprint(t, rotated)) || !strings.Contains(stderr, fingerprint(t, first)) {
		t.Fatalf("hq key rotate printed %q and %q (the key before was %s)", rotated, stderr, first)
	}
	if fi, err := os.Stat(keyFileOf(t, db)); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the rotated key file: %v, %v", fi, err)
	}
	waitFor(t, 5*time.Second, "the controller to serve the rotated key", func() bool { return controllerKey(t, ctl.url) == rotated })
	if printed, _ := hqKey(t, db); printed != rotated {
		t.Fatalf("hq key prints %s after the rotation, not %s", printed, rotated)
	}
	for _, h := range hosts {
		waitFor(t, 20*time.Second, h.node+" to adopt the rotated key", func() bool {
			return slices.Equal(keysHeld(h), []string{first, rotated}) &&
				strings.Contains(h.out.String(), "old_fingerprint="+fingerprint(t, first)+" new_fingerprint="+fingerprint(t, rotated))
		})
	}
	c.putModule("motd", motd("after the rotation\n"))
	converged("the revision signed by the rotated key", "after the rotation\n", hosts...)

	// A second rotation while the sleeper is still down; it comes back as it was provisioned,
	// with the first key, and follows the chain through both.
	third, _ := hqKey(t, db, "rotate")
	waitFor(t, 5*time.Second, "the controller to serve the third key", func() bool { return controllerKey(t, ctl.url) == third })
	sleeper = startHost(t, ctl.url, "sleeper", sleeperToken, sleeperRoot, sleeperState, "HOSTD_CONTROLLER_KEY="+first)
	hosts = append(hosts, sleeper)
	for _, h := range hosts {
		waitFor(t, 20*time.Second, h.node+" to adopt the third key", func() bool {
			return slices.Equal(keysHeld(h), []string{first, rotated, third})
		})
	}
	c.putModule("motd", motd("after two rotations\n"))
	converged("the revision signed by the third key", "after two rotations\n", hosts...)
	for _, h := range hosts {
		if strings.Contains(h.out.String(), "refused declaration") {
			t.Fatalf("%s refused a declaration across the rotations:\n%s", h.node, h.out.String())
		}
	}

	// A key nothing vouches for, put in place whole, as an operator replacing the file would.
	_, stranger, _ := ed25519.GenerateKey(nil)
	strangerKey := base64.StdEncoding.EncodeToString(stranger.Public().(ed25519.PublicKey))
	tmp := keyFileOf(t, db) + ".new"
	os.WriteFile(tmp, pem.EncodeToMemory(&pem.Block{Type: "HQ ED25519 PRIVATE KEY", Bytes: stranger.Seed()}), 0o600)
	if err := os.Rename(tmp, keyFileOf(t, db)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 5*time.Second, "the controller to serve the unvouched key", func() bool { return controllerKey(t, ctl.url) == strangerKey })
	waitFor(t, 5*time.Second, "the controller to warn of it", func() bool { return strings.Contains(ctl.out.String(), "does not vouch for") })
	c.putModule("motd", motd("signed by a stranger\n"))
	for _, h := range hosts {
		var refused hq.SendView
		waitFor(t, 20*time.Second, h.node+" to refuse and report the unvouched key", func() bool {
			for _, s := range c.sends(h.node) {
				if s.Generation == c.node(h.node).Generation && s.Outcome == "refused" {
					refused = s
					return true
				}
			}
			return false
		})
		for _, want := range []string{"signed by key " + fingerprint(t, strangerKey), "(" + fingerprint(t, third) + ") does not vouch for"} {
			if !strings.Contains(refused.Reason, want) {
				t.Fatalf("%s's refusal %q does not say %q", h.node, refused.Reason, want)
			}
		}
		v := c.node(h.node)
		if findLine(v.Lines, "refused declaration generation") == "" || v.AppliedGeneration >= v.Generation {
			t.Fatalf("%s after refusing generation %d: lines %q, applied %d", h.node, v.Generation, v.Lines, v.AppliedGeneration)
		}
		if got := readFile(filepath.Join(h.root, "etc/motd")); got != "after two rotations\n" {
			t.Fatalf("%s applied %q from a key nothing vouches for", h.node, got)
		}
		if held := keysHeld(h); !slices.Equal(held, []string{first, rotated, third}) {
			t.Fatalf("%s holds %v after an unvouched key", h.node, held)
		}
	}
}
