package hostd

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/keys"
)

// keyFile is where hostd keeps, in the state dir, the controller keys it has held, one base64
// key a line, oldest first: the key it started from (HOSTD_CONTROLLER_KEY, or the one learned
// on first contact with HOSTD_LEARN_KEY=1), then every key it adopted through a rotation. The
// last is the key it holds. A file of one line is what hostd kept before keys rotated.
const keyFile = "controller.key"

// parseKey decodes a base64 (standard) ed25519 public key.
func parseKey(s string) (ed25519.PublicKey, error) {
	k, err := keys.ParsePublic(s)
	if err != nil {
		return nil, fmt.Errorf("controller %w", err)
	}
	return k, nil
}

// keyFingerprint names a key in logs as hq key prints it.
func keyFingerprint(key ed25519.PublicKey) string { return keys.Fingerprint(key) }

// trust is the controller key this host holds, and the keys it held before: the chain of
// rotations it followed. The poller verifies declarations with it while the daemon's loop
// offers it the key the controller answers reports with, so it has a lock.
type trust struct {
	file string
	log  *slog.Logger

	mu sync.Mutex
	// keys are oldest first; the last is held. Never empty.
	keys []ed25519.PublicKey
	// unfollowed is the last key a report answer offered that the key held does not lead to,
	// so the warning is logged once, not at every report.
	unfollowed string
}

// held is the key every declaration must be signed with, or vouched for from.
func (t *trust) held() ed25519.PublicKey {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.keys[len(t.keys)-1]
}

// verify checks d with the key held (see Verify). A declaration signed by a key its chain
// vouches for from the key held is accepted once that key is adopted: kept in the state dir
// first, so a restart holds it too, and then held. If it cannot be kept, d is refused.
func (t *trust) verify(d *hq.Declaration, node string) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	held := t.keys[len(t.keys)-1]
	adopt, err := Verify(d, node, held)
	if err != nil {
		if k, perr := parseKey(d.Key); perr == nil && t.heldBefore(k) {
			return fmt.Errorf("signed by key %s, which this host rotated away from (it holds %s): a controller that has not read its rotated key file yet, or a replay",
				keyFingerprint(k), keyFingerprint(held))
		}
		return err
	}
	if len(adopt) == 0 {
		return nil
	}
	return t.adopt(adopt, "declaration", d.Generation)
}

// verifyKept checks the declaration kept from the last run. It was verified when it came, with
// the key held then, which may be one this host has rotated away from since (a rotation
// learned from a report answer does not re-sign what was applied): any key it held speaks for
// what it applied. New declarations are held to the key held now.
func (t *trust) verifyKept(d *hq.Declaration, node string) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	var err error
	for _, k := range slices.Backward(t.keys) {
		var adopt []ed25519.PublicKey
		if adopt, err = Verify(d, node, k); err == nil && len(adopt) == 0 {
			return nil
		}
	}
	if err == nil {
		err = errors.New("signed by a key this host never held")
	}
	return err
}

// offer takes the key the controller signs with now, and the chain to it, from a report answer:
// a host follows a rotation within a report, without waiting for a new generation, which may
// not come before the vouch for the key it holds retires. A key the one held does not lead to
// changes nothing; a key this host held before is a controller that has not read the rotated
// key file yet, and is let be.
func (t *trust) offer(key string, chain []keys.Vouch) {
	t.mu.Lock()
	defer t.mu.Unlock()
	offered, err := parseKey(key)
	held := t.keys[len(t.keys)-1]
	if err != nil || offered.Equal(held) || t.heldBefore(offered) {
		return
	}
	followed, err := keys.Followed(held, chain)
	if err == nil && !followed[len(followed)-1].Equal(offered) {
		err = fmt.Errorf("the chain leads to %s", keyFingerprint(followed[len(followed)-1]))
	}
	if err != nil {
		if t.unfollowed != key {
			t.unfollowed = key
			t.log.Warn("the controller signs with a key the one held does not vouch for: what it signs is refused until HOSTD_CONTROLLER_KEY is given its key",
				"offered", keyFingerprint(offered), "held", keyFingerprint(held), "reason", err.Error())
		}
		return
	}
	if err := t.adopt(followed, "report answer", 0); err != nil {
		t.log.Error("not adopting the controller's new key", "err", err)
	}
}

// heldBefore reports whether k is a key this host held and rotated away from. t.mu is held.
func (t *trust) heldBefore(k ed25519.PublicKey) bool {
	return slices.ContainsFunc(t.keys[:len(t.keys)-1], func(h ed25519.PublicKey) bool { return h.Equal(k) })
}

// adopt keeps keys after those held, and holds the last. t.mu is held.
func (t *trust) adopt(keys []ed25519.PublicKey, via string, generation int64) error {
	next := append(slices.Clone(t.keys), keys...)
	old, now := t.keys[len(t.keys)-1], keys[len(keys)-1]
	if err := writeKeys(t.file, next); err != nil {
		return fmt.Errorf("the controller's new key %s is vouched for by the key held (%s), but keeping it failed, so it is not adopted: %w",
			keyFingerprint(now), keyFingerprint(old), err)
	}
	t.keys, t.unfollowed = next, ""
	attrs := []any{"old_fingerprint", keyFingerprint(old), "new_fingerprint", keyFingerprint(now), "via", via, "kept_in", t.file}
	if generation > 0 {
		attrs = append(attrs, "generation", generation)
	}
	t.log.Warn("adopted the controller's new signing key, vouched for by the key held", attrs...)
	return nil
}

// readKeys reads the keys kept in name; none when there is no file.
func readKeys(name string) ([]ed25519.PublicKey, error) {
	b, err := os.ReadFile(name)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var keys []ed25519.PublicKey
	for i, line := range strings.Fields(string(b)) {
		k, err := parseKey(line)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", i+1, err)
		}
		keys = append(keys, k)
	}
	if len(keys) == 0 {
		return nil, errors.New("it is empty")
	}
	return keys, nil
}

func encodeKey(k ed25519.PublicKey) string { return base64.StdEncoding.EncodeToString(k) }

func writeKeys(name string, keys []ed25519.PublicKey) error {
	var b strings.Builder
	for _, k := range keys {
		b.WriteString(encodeKey(k) + "\n")
	}
	return writeFileAtomic(name, []byte(b.String()), 0o600)
}

// loadTrust returns the keys every declaration must be signed with or vouched for from. The
// rule, from the operator's word and the keys kept in the state dir:
//
//   - HOSTD_CONTROLLER_KEY set, and among the keys kept: the newest key kept is held. A host
//     that followed a rotation never falls back to a key it rotated away from, whichever key
//     of its chain the operator configured.
//   - HOSTD_CONTROLLER_KEY set, and not among them: the operator's key is held, and the keys
//     kept are set aside. That is how a host is re-provisioned, after a key it missed retired
//     or after a key was replaced without a vouch.
//   - HOSTD_LEARN_KEY=1 without HOSTD_CONTROLLER_KEY: the newest key kept, or, with none kept,
//     the one the controller offers now, fetched until it answers and kept from then on.
//
// A kept file that does not read is an error, not a reason to hold some other key. It never
// returns without a key or an error: hostd applies nothing unsigned.
func loadTrust(ctx context.Context, cfg Config, c *client, log *slog.Logger) (*trust, error) {
	name := filepath.Join(cfg.StateDir, keyFile)
	kept, err := readKeys(name)
	if err != nil {
		return nil, fmt.Errorf("the controller keys kept in %s: %w (remove the file to hold HOSTD_CONTROLLER_KEY)", name, err)
	}
	t := &trust{file: name, log: log, keys: kept}
	switch {
	case cfg.ControllerKey != "":
		configured, err := parseKey(cfg.ControllerKey)
		if err != nil {
			return nil, err
		}
		return t, t.holdConfigured(configured)
	case !cfg.LearnKey:
		return nil, errNoKeyConfigured
	case len(kept) > 0:
		return t, nil
	}
	key, err := learnKey(ctx, c, log)
	if err != nil {
		return nil, err
	}
	if err := writeKeys(name, []ed25519.PublicKey{key}); err != nil {
		return nil, fmt.Errorf("keeping the learned key: %w", err)
	}
	log.Warn("learned the controller key on first contact; only declarations it signs are applied",
		"fingerprint", keyFingerprint(key), "kept_in", name)
	t.keys = []ed25519.PublicKey{key}
	return t, nil
}

// holdConfigured applies loadTrust's rule for HOSTD_CONTROLLER_KEY to the keys kept.
func (t *trust) holdConfigured(configured ed25519.PublicKey) error {
	if slices.ContainsFunc(t.keys, func(k ed25519.PublicKey) bool { return k.Equal(configured) }) {
		if held := t.keys[len(t.keys)-1]; !held.Equal(configured) {
			t.log.Info("holding the key adopted through rotation from HOSTD_CONTROLLER_KEY",
				"configured", keyFingerprint(configured), "held", keyFingerprint(held))
		}
		return nil
	}
	if len(t.keys) > 0 {
		t.log.Warn("HOSTD_CONTROLLER_KEY is not among the keys this host adopted: holding it, as the operator's word, and setting those aside",
			"configured", keyFingerprint(configured), "adopted", keyFingerprint(t.keys[len(t.keys)-1]))
		if err := writeKeys(t.file, []ed25519.PublicKey{configured}); err != nil {
			return fmt.Errorf("keeping HOSTD_CONTROLLER_KEY: %w", err)
		}
	}
	t.keys = []ed25519.PublicKey{configured}
	return nil
}

// learnKey fetches the key the controller offers, until it answers one.
func learnKey(ctx context.Context, c *client, log *slog.Logger) (ed25519.PublicKey, error) {
	retry := newRetrier(time.Second, 30*time.Second)
	busy := overload{what: "fetching the controller key"}
	for {
		s, err := c.ControllerKey(ctx)
		var key ed25519.PublicKey
		if err == nil {
			if key, err = parseKey(s); err == nil {
				return key, nil
			}
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if !retry.backOff(ctx, log, &busy, "fetching the controller key to learn; nothing is applied until it is", err) {
			return nil, ctx.Err()
		}
	}
}

var errNoKeyConfigured = errors.New("HOSTD_CONTROLLER_KEY is required (the controller's public key, as GET /api/v1/controller-key serves it), " +
	"or set HOSTD_LEARN_KEY=1 to learn it from the controller on first contact")
