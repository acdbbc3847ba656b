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
	"strings"
	"time"

	"github.com/meshhq/hq"
)

// keyFile is where a key learned on first contact (HOSTD_LEARN_KEY=1) is kept in the state dir.
const keyFile = "controller.key"

// parseKey decodes a base64 (standard) ed25519 public key.
func parseKey(s string) (ed25519.PublicKey, error) {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("controller key is not standard base64: %w", err)
	}
	if len(b) != ed25519.PublicKeySize {
		return nil, fmt.Errorf("controller key is %d bytes, not %d", len(b), ed25519.PublicKeySize)
	}
	return ed25519.PublicKey(b), nil
}

// keyFingerprint names a key in logs as hq key prints it.
func keyFingerprint(key ed25519.PublicKey) string { return hq.KeyFingerprint(key) }

// pinKey returns the key every declaration must be signed with: HOSTD_CONTROLLER_KEY, or with
// HOSTD_LEARN_KEY=1 the one kept in the state dir, or else the one the controller offers now,
// fetched until it answers and kept from then on. It never returns a nil key without an error:
// hostd applies nothing unsigned.
func pinKey(ctx context.Context, cfg Config, c *client, log *slog.Logger) (ed25519.PublicKey, error) {
	if cfg.ControllerKey != "" {
		return parseKey(cfg.ControllerKey)
	}
	if !cfg.LearnKey {
		return nil, errNoKeyConfigured
	}
	name := filepath.Join(cfg.StateDir, keyFile)
	b, err := os.ReadFile(name)
	if err == nil {
		key, err := parseKey(strings.TrimSpace(string(b)))
		if err != nil {
			return nil, fmt.Errorf("the key learned earlier (%s): %w", name, err)
		}
		return key, nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	retry := newRetrier(time.Second, 30*time.Second)
	busy := overload{what: "fetching the controller key"}
	for {
		s, err := c.controllerKey(ctx)
		var key ed25519.PublicKey
		if err == nil {
			key, err = parseKey(s)
		}
		if err == nil {
			if err := writeFileAtomic(name, []byte(s+"\n"), 0o600); err != nil {
				return nil, fmt.Errorf("keeping the learned key: %w", err)
			}
			log.Warn("learned the controller key on first contact; only declarations it signs are applied",
				"fingerprint", keyFingerprint(key), "kept_in", name)
			return key, nil
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
