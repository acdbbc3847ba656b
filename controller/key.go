package controller

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/meshhq/hq/api"
	"github.com/meshhq/hq/keys"
)

// The key file is PEM: one block of type pemKey, the seed of the key that signs now, and one
// block of type pemVouch per rotation, oldest first, whose bytes are the vouch's signature and
// whose headers name the two keys, the time of the rotation and when its grace ends. A file
// written before rotation existed is the key block alone, and loads as a key never rotated.
//
// The end of a rotation's grace is decided by hq key rotate, with its HQ_KEY_GRACE, and
// written into the file, so every controller reading the file honours the same vouch for the
// same time, whatever its own HQ_KEY_GRACE, and the rotation can say when that is. A vouch
// written before the file recorded it has no Honoured-Until, and is honoured for the
// HQ_KEY_GRACE of whoever reads it, as it always was.
//
// A rotated-away key is kept only as the public half its vouch names: the controller still
// verifies with it while it is in grace, and never signs with it again, so its private half
// is of no use, only a danger, once it is replaced.
const (
	pemKey   = "HQ ED25519 PRIVATE KEY"
	pemVouch = "HQ KEY VOUCH"
)

// SigningKeys is what a key file holds: the key signing now and the rotations that led to it.
type SigningKeys struct {
	Key       ed25519.PrivateKey
	Rotations []Rotation
}

// Rotation is one rotation: the vouch of the key rotated away for its successor, when it was
// made, and when its grace ends (zero in a vouch written before the file recorded it).
type Rotation struct {
	Vouch keys.Vouch
	At    time.Time
	Until time.Time
}

// Ends is when r's grace ends: what the file records, or grace after r for a vouch that
// records none.
func (r Rotation) Ends(grace time.Duration) time.Time {
	if !r.Until.IsZero() {
		return r.Until
	}
	return r.At.Add(grace)
}

// Public is the public half of the key signing now.
func (k *SigningKeys) Public() ed25519.PublicKey { return k.Key.Public().(ed25519.PublicKey) }

// InGrace returns the rotations whose grace has not run out at now, oldest first; grace is
// that of a vouch that records none. They are the newest ones, taken back from the newest to
// the first that is past grace, so the chain they make always ends at the key signing now and
// never has a hole, even if the clock jumped or a rotation's grace ends before an earlier one's.
func (k *SigningKeys) InGrace(now time.Time, grace time.Duration) []Rotation {
	i := len(k.Rotations)
	for i > 0 && now.Before(k.Rotations[i-1].Ends(grace)) {
		i--
	}
	return k.Rotations[i:]
}

// rotatedAway reports whether pub is a key the file says was rotated away from.
func (k *SigningKeys) rotatedAway(pub ed25519.PublicKey) bool {
	_, ok := k.rotationFrom(pub)
	return ok
}

// rotationFrom is the rotation away from pub, if the file holds one.
func (k *SigningKeys) rotationFrom(pub ed25519.PublicKey) (Rotation, bool) {
	for _, r := range k.Rotations {
		if by, err := keys.ParsePublic(r.Vouch.By); err == nil && by.Equal(pub) {
			return r, true
		}
	}
	return Rotation{}, false
}

// ForAPI is what the API signs and verifies with at now: the key, the vouches in grace that
// lead to it, and the keys they were made by, whose signatures on reports are still honoured.
func (k *SigningKeys) ForAPI(now time.Time, grace time.Duration) *api.Keys {
	rs := k.InGrace(now, grace)
	chain := make([]keys.Vouch, 0, len(rs))
	var honoured []ed25519.PublicKey
	for _, r := range rs {
		chain = append(chain, r.Vouch)
		if by, err := keys.ParsePublic(r.Vouch.By); err == nil {
			honoured = append(honoured, by)
		}
	}
	return api.NewKeys(k.Key, chain, honoured)
}

// LoadOrCreateKeys reads the controller's key file at path, creating it (mode 0600) with a
// new key on first start. Every controller on the same database must share it.
func LoadOrCreateKeys(path string) (*SigningKeys, error) {
	k, err := ReadKeys(path)
	if errors.Is(err, fs.ErrNotExist) {
		if err := createKey(path); err != nil {
			return nil, err
		}
		k, err = ReadKeys(path)
	}
	return k, err
}

// ReadKeys reads the key file at path; an error wrapping fs.ErrNotExist says there is none.
func ReadKeys(path string) (*SigningKeys, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read signing key: %w", err)
	}
	k, err := parseKeys(b)
	if err != nil {
		return nil, fmt.Errorf("signing key %s: %w", path, err)
	}
	return k, nil
}

// parseKeys decodes a key file, and checks that its rotations make one chain ending at its
// key: a file that does not is refused whole, never half used.
func parseKeys(b []byte) (*SigningKeys, error) {
	k := &SigningKeys{}
	for {
		var block *pem.Block
		block, b = pem.Decode(b)
		if block == nil {
			break
		}
		switch block.Type {
		case pemKey:
			if k.Key != nil || len(block.Bytes) != ed25519.SeedSize {
				return nil, errors.New("it is not an hq key file (one signing key of 32 bytes)")
			}
			k.Key = ed25519.NewKeyFromSeed(block.Bytes)
		case pemVouch:
			r, err := parseRotation(block)
			if err != nil {
				return nil, fmt.Errorf("rotation %d: %w", len(k.Rotations)+1, err)
			}
			k.Rotations = append(k.Rotations, r)
		default:
			return nil, fmt.Errorf("it holds a %q block, which is nothing of hq's", block.Type)
		}
	}
	if k.Key == nil {
		return nil, errors.New("it is not an hq key file (no signing key in it)")
	}
	if len(bytes.TrimSpace(b)) > 0 {
		return nil, errors.New("it holds something besides PEM blocks")
	}
	return k, k.checkChain()
}

func parseRotation(block *pem.Block) (Rotation, error) {
	at, err := time.Parse(time.RFC3339, block.Headers["Rotated-At"])
	if err != nil {
		return Rotation{}, fmt.Errorf("Rotated-At: %w", err)
	}
	var until time.Time
	if u, ok := block.Headers["Honoured-Until"]; ok {
		if until, err = time.Parse(time.RFC3339, u); err != nil {
			return Rotation{}, fmt.Errorf("Honoured-Until: %w", err)
		}
	}
	v := keys.Vouch{By: block.Headers["By"], Key: block.Headers["Key"], Signature: base64.StdEncoding.EncodeToString(block.Bytes)}
	return Rotation{Vouch: v, At: at, Until: until}, nil
}

// checkChain verifies every vouch, in order, and that the last is for the key signing now.
func (k *SigningKeys) checkChain() error {
	if len(k.Rotations) == 0 {
		return nil
	}
	chain := make([]keys.Vouch, len(k.Rotations))
	for i, r := range k.Rotations {
		chain[i] = r.Vouch
	}
	first, err := keys.ParsePublic(chain[0].By)
	if err != nil {
		return fmt.Errorf("rotation 1: %w", err)
	}
	last, err := keys.FollowChain(first, chain)
	if err != nil {
		return err
	}
	if !bytes.Equal(last, k.Public()) {
		return fmt.Errorf("its last rotation vouches for %s, not for its signing key %s", keys.Fingerprint(last), keys.Fingerprint(k.Public()))
	}
	return nil
}

// encode writes k as a key file.
func (k *SigningKeys) encode() []byte {
	var b bytes.Buffer
	pem.Encode(&b, &pem.Block{Type: pemKey, Bytes: k.Key.Seed()})
	for _, r := range k.Rotations {
		sig, _ := base64.StdEncoding.DecodeString(r.Vouch.Signature)
		h := map[string]string{"By": r.Vouch.By, "Key": r.Vouch.Key, "Rotated-At": r.At.UTC().Format(time.RFC3339)}
		if !r.Until.IsZero() {
			h["Honoured-Until"] = r.Until.UTC().Format(time.RFC3339)
		}
		pem.Encode(&b, &pem.Block{Type: pemVouch, Bytes: sig, Headers: h})
	}
	return b.Bytes()
}

// rotate returns the keys after a rotation at now to next: next signs, the key it replaces
// vouches for it until grace from now, and the rotations past grace are dropped, their keys
// retired for good.
func (k *SigningKeys) rotate(next ed25519.PrivateKey, now time.Time, grace time.Duration) *SigningKeys {
	rs := append([]Rotation(nil), k.InGrace(now, grace)...)
	at := now.UTC().Truncate(time.Second)
	rs = append(rs, Rotation{Vouch: keys.NewVouch(k.Key, next.Public().(ed25519.PublicKey)), At: at, Until: at.Add(grace).Truncate(time.Second)})
	return &SigningKeys{Key: next, Rotations: rs}
}

// RotateKeys replaces the signing key in the key file at path with a new one the old one
// vouches for until grace from now, and returns the keys the file now holds, read back from
// what was written, so that what the caller reports is what controllers honour. There must
// be a key to rotate: a missing or unreadable file is an error, and leaves everything as it
// was. Two rotations at once take turns: the second rotates what the first wrote.
func RotateKeys(path string, now time.Time, grace time.Duration) (*SigningKeys, error) {
	var rotated *SigningKeys
	err := withKeyFileLocked(path, func() error {
		k, err := ReadKeys(path)
		if err != nil {
			return err
		}
		_, next, err := ed25519.GenerateKey(rand.Reader)
		if err != nil {
			return err
		}
		data := k.rotate(next, now, grace).encode()
		if err := replaceFile(path, data); err != nil {
			return err
		}
		rotated, err = parseKeys(data)
		return err
	})
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("no signing key at %s to rotate (hq key or hq serve makes the first): %w", path, err)
	}
	return rotated, err
}

// withKeyFileLocked runs fn holding an exclusive lock on the key file at path. The lock is on
// the file itself, and a rotation replaces the file, so a lock taken on a file that has been
// replaced meanwhile is let go and taken again on the new one.
func withKeyFileLocked(path string, fn func() error) error {
	for {
		f, err := os.Open(path)
		if err != nil {
			return fmt.Errorf("read signing key: %w", err)
		}
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
			f.Close()
			return fmt.Errorf("lock signing key %s: %w", path, err)
		}
		locked, err1 := f.Stat()
		now, err2 := os.Stat(path)
		if err := errors.Join(err1, err2); err != nil {
			f.Close()
			return fmt.Errorf("read signing key: %w", err)
		}
		if os.SameFile(locked, now) {
			err := fn()
			f.Close()
			return err
		}
		f.Close()
	}
}

// replaceFile puts data at path whole or not at all, mode 0600: a controller reading the file
// while it is replaced reads the old keys or the new ones, never a torn file.
func replaceFile(path string, data []byte) error {
	tmp, err := writeTemp(path, data)
	if err != nil {
		return err
	}
	defer os.Remove(tmp)
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("replace signing key: %w", err)
	}
	return syncDir(filepath.Dir(path))
}

// createKey writes a new key beside path and links it into place, so a controller starting
// at the same moment reads either no key or a whole one, and the first link wins.
func createKey(path string) error {
	_, key, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return err
	}
	tmp, err := writeTemp(path, (&SigningKeys{Key: key}).encode())
	if err != nil {
		return err
	}
	defer os.Remove(tmp)
	if err := os.Link(tmp, path); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("create signing key: %w", err)
	}
	return syncDir(filepath.Dir(path))
}

// writeTemp writes data to a new file (mode 0600, as os.CreateTemp makes it) beside path,
// synced, and returns its name.
func writeTemp(path string, data []byte) (string, error) {
	f, err := os.CreateTemp(filepath.Dir(path), ".hq-key-*")
	if err != nil {
		return "", fmt.Errorf("write signing key: %w", err)
	}
	_, err = f.Write(data)
	if err = errors.Join(err, f.Sync(), f.Close()); err != nil {
		os.Remove(f.Name())
		return "", fmt.Errorf("write signing key: %w", err)
	}
	return f.Name(), nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	return nil
}
