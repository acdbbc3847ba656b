// Package seal is how hq keeps a secret unreadable to all but the one who must read it: the
// controller encrypts every secret version to a key of its own before it reaches the
// database, and seals each value a declaration uses to the key of the node it is for. Both
// are age (X25519) files, armored, so they travel as text in a column or in JSON; age does the
// cryptography, and nothing here is more than its plumbing.
package seal

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"filippo.io/age"
	"filippo.io/age/armor"
)

// Key is an age X25519 identity: the controller's key for secrets at rest, or a node's key
// for the values sealed to it.
type Key struct {
	id *age.X25519Identity
}

// NewKey makes a new key.
func NewKey() (*Key, error) {
	id, err := age.GenerateX25519Identity()
	if err != nil {
		return nil, err
	}
	return &Key{id: id}, nil
}

// ParseKey reads a key as String writes it (AGE-SECRET-KEY-1…), with surrounding space.
func ParseKey(s string) (*Key, error) {
	id, err := age.ParseX25519Identity(strings.TrimSpace(s))
	if err != nil {
		return nil, fmt.Errorf("not an age X25519 key: %w", err)
	}
	return &Key{id: id}, nil
}

// String is the key's secret half, as its file holds it.
func (k *Key) String() string { return k.id.String() }

// Public is the key's public half (age1…), to which values are sealed.
func (k *Key) Public() string { return k.id.Recipient().String() }

// ValidPublic reports why s is not a public key a value can be sealed to.
func ValidPublic(s string) error {
	_, err := age.ParseX25519Recipient(s)
	return err
}

// To encrypts value to the public key public (age1…), armored.
func To(public string, value []byte) (string, error) {
	r, err := age.ParseX25519Recipient(public)
	if err != nil {
		return "", fmt.Errorf("not an age X25519 public key: %w", err)
	}
	var out bytes.Buffer
	a := armor.NewWriter(&out)
	w, err := age.Encrypt(a, r)
	if err != nil {
		return "", err
	}
	if _, err := w.Write(value); err != nil {
		return "", err
	}
	if err := errors.Join(w.Close(), a.Close()); err != nil {
		return "", err
	}
	return out.String(), nil
}

// Seal encrypts value to k itself.
func (k *Key) Seal(value []byte) (string, error) { return To(k.Public(), value) }

// MaxOpened bounds what Open reads: a secret is at most 64 KiB, so anything far larger is not
// one hq sealed.
const MaxOpened = 1 << 20

// Open decrypts what To sealed to k's public half. Sealed to another key, or changed on the
// way, it is an error and yields nothing.
func (k *Key) Open(sealed string) ([]byte, error) {
	r, err := age.Decrypt(armor.NewReader(strings.NewReader(sealed)), k.id)
	if err != nil {
		return nil, fmt.Errorf("cannot open the sealed value: %w", err)
	}
	b, err := io.ReadAll(io.LimitReader(r, MaxOpened+1))
	if err != nil {
		return nil, fmt.Errorf("cannot open the sealed value: %w", err)
	}
	if len(b) > MaxOpened {
		return nil, fmt.Errorf("the sealed value is larger than %d bytes", MaxOpened)
	}
	return b, nil
}

// Read reads the key in the file at path.
func Read(path string) (*Key, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	k, err := ParseKey(string(b))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return k, nil
}

// LoadOrCreate reads the key in the file at path, making it (mode 0600) when there is none.
// It is linked into place whole, so two processes starting at once end up with one key.
func LoadOrCreate(path string) (*Key, error) {
	k, err := Read(path)
	if !errors.Is(err, fs.ErrNotExist) {
		return k, err
	}
	k, err = NewKey()
	if err != nil {
		return nil, err
	}
	tmp, err := WriteTemp(path, k)
	if err != nil {
		return nil, err
	}
	defer os.Remove(tmp)
	if err := os.Link(tmp, path); err != nil && !errors.Is(err, fs.ErrExist) {
		return nil, fmt.Errorf("create %s: %w", path, err)
	}
	return Read(path)
}

// WriteTemp writes k to a new file beside path (mode 0600), synced, and returns its name.
func WriteTemp(path string, k *Key) (string, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return "", err
	}
	f, err := os.CreateTemp(filepath.Dir(path), ".hq-secrets-key-*")
	if err != nil {
		return "", err
	}
	_, err = f.WriteString(k.String() + "\n")
	if err = errors.Join(err, f.Sync(), f.Close()); err != nil {
		os.Remove(f.Name())
		return "", fmt.Errorf("write %s: %w", path, err)
	}
	return f.Name(), nil
}
