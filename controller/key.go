package controller

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// LoadOrCreateKey reads the controller's signing key from path, creating it (mode 0600) on
// first start. Every controller on the same database must share it, so it lives beside it.
func LoadOrCreateKey(path string) (ed25519.PrivateKey, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		if err := createKey(path); err != nil {
			return nil, err
		}
		b, err = os.ReadFile(path)
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

// createKey writes a new key beside path and links it into place, so a controller starting
// at the same moment reads either no key or a whole one, and the first link wins.
func createKey(path string) error {
	_, key, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(path), ".hq-key-*")
	if err != nil {
		return fmt.Errorf("create signing key: %w", err)
	}
	defer os.Remove(f.Name())
	block := pem.EncodeToMemory(&pem.Block{Type: "HQ ED25519 PRIVATE KEY", Bytes: key.Seed()})
	if _, err := f.Write(block); err != nil {
		f.Close()
		return fmt.Errorf("write signing key: %w", err)
	}
	if err := errors.Join(f.Sync(), f.Close()); err != nil {
		return fmt.Errorf("write signing key: %w", err)
	}
	if err := os.Link(f.Name(), path); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("create signing key: %w", err)
	}
	return nil
}
