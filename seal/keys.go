package seal

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// OldSuffix names, beside the controller's key file, the key a rekey is moving away from:
// kept while any version may still be encrypted to it, removed when none is.
const OldSuffix = ".old"

// Keys is the controller's key for secrets at rest, and during a rekey the key before it. A
// version names the key it is encrypted to (its recipient), and opens with that one. The
// files are read again when a version names a key neither is, and when the key file
// changed: a controller that did not run the rekey follows it without a restart.
type Keys struct {
	path string // "" for keys given in memory
	mu   sync.Mutex
	cur  *Key
	old  *Key
	// mod is the key file's modification time when it was read.
	mod time.Time
}

// KeysOf is a keyring of k alone, with no file behind it.
func KeysOf(k *Key) *Keys { return &Keys{cur: k} }

// LoadKeys reads the key in the file at path, making it (mode 0600) when there is none, and
// the key of path.old when a rekey left one.
func LoadKeys(path string) (*Keys, error) {
	if _, err := LoadOrCreate(path); err != nil {
		return nil, err
	}
	k := &Keys{path: path}
	k.mu.Lock()
	defer k.mu.Unlock()
	return k, k.reload()
}

// reload reads both files again; k.mu is held.
func (k *Keys) reload() error {
	fi, err := os.Stat(k.path)
	if err != nil {
		return err
	}
	cur, err := Read(k.path)
	if err != nil {
		return err
	}
	old, err := Read(k.path + OldSuffix)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	k.cur, k.old, k.mod = cur, old, fi.ModTime()
	return nil
}

// Current is the key a new version is encrypted to: the key file's, read again when the file
// changed since (a rekey replaced it).
func (k *Keys) Current() *Key {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.path != "" {
		if fi, err := os.Stat(k.path); err == nil && !fi.ModTime().Equal(k.mod) {
			k.reload() // on an error, the key held stays
		}
	}
	return k.cur
}

// Old is the key a rekey is moving away from, nil when there is none.
func (k *Keys) Old() *Key {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.old
}

// Open opens ciphertext encrypted to recipient with the key whose public half that is. A
// recipient neither key is, even after reading the files again, is an error that says so:
// the database was moved without its key file, or the key file was replaced by hand.
func (k *Keys) Open(recipient, ciphertext string) ([]byte, error) {
	key := k.find(recipient)
	if key == nil {
		cur := k.Current()
		return nil, fmt.Errorf("it is encrypted to the key %s, and this controller's secrets key is %s (HQ_SECRETS_KEY_FILE): the database was moved without the key file it was kept with; put that file back, or put the secret again", recipient, cur.Public())
	}
	return key.Open(ciphertext)
}

func (k *Keys) find(recipient string) *Key {
	k.mu.Lock()
	defer k.mu.Unlock()
	for range 2 {
		for _, key := range []*Key{k.cur, k.old} {
			if key != nil && key.Public() == recipient {
				return key
			}
		}
		if k.path == "" || k.reload() != nil {
			return nil
		}
	}
	return nil
}

// BeginRekey gives the key file at path a new key, and keeps the key it held as path.old, so
// that every version opens until each is encrypted again: a controller started from here on
// reads both. When path.old is there already, a rekey that did not end is resumed with the key
// the file holds. It returns the new key.
func BeginRekey(path string) (*Key, error) {
	if _, err := os.Stat(path + OldSuffix); err == nil {
		return Read(path)
	}
	if _, err := Read(path); err != nil {
		return nil, err
	}
	k, err := NewKey()
	if err != nil {
		return nil, err
	}
	tmp, err := WriteTemp(path, k)
	if err != nil {
		return nil, err
	}
	defer os.Remove(tmp)
	if err := os.Link(path, path+OldSuffix); err != nil {
		return nil, fmt.Errorf("keep the old key as %s: %w", path+OldSuffix, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return nil, fmt.Errorf("replace %s: %w", path, err)
	}
	return k, syncDir(path)
}

// EndRekey removes path.old, once no version is encrypted to the key it holds.
func EndRekey(path string) error {
	if err := os.Remove(path + OldSuffix); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return syncDir(path)
}

// syncDir makes a rename or a removal in path's directory durable.
func syncDir(path string) error {
	d, err := os.Open(filepath.Dir(path))
	if err != nil {
		return err
	}
	return errors.Join(d.Sync(), d.Close())
}
