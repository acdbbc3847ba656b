package api

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// LoadOrCreateKey reads the controller's signing key from path, creating it (mode 0600) on
// first start. Every controller on the same database must share it, so it lives beside it.
func LoadOrCreateKey(path string) (ed25519.PrivateKey, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		_, key, err := ed25519.GenerateKey(rand.Reader)
		if err != nil {
			return nil, err
		}
		block := pem.EncodeToMemory(&pem.Block{Type: "HQ ED25519 PRIVATE KEY", Bytes: key.Seed()})
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) {
			return LoadOrCreateKey(path) // another controller made it first
		}
		if err != nil {
			return nil, fmt.Errorf("create signing key: %w", err)
		}
		if _, err := f.Write(block); err != nil {
			f.Close()
			return nil, fmt.Errorf("write signing key: %w", err)
		}
		return key, f.Close()
	}
	if err != nil {
		return nil, fmt.Errorf("read signing key: %w", err)
	}
	block, _ := pem.Decode(b)
	if block == nil || len(block.Bytes) != ed25519.SeedSize {
		return nil, fmt.Errorf("signing key %s is not an hq key", path)
	}
	return ed25519.NewKeyFromSeed(block.Bytes), nil
}
