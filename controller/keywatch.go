package controller

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/meshhq/hq/api"
	"github.com/meshhq/hq/keys"
)

// keyWatcher holds the keys the controller signs and verifies with, and reads the key file
// again when it changes, so a key rotated by hq key rotate (on this machine or copied here)
// signs within a second or two, with no restart and without dropping the open long-polls.
type keyWatcher struct {
	path string
	// grace is HQ_KEY_GRACE, for a vouch in the file that records no end of its own.
	grace time.Duration
	log   *slog.Logger
	now   func() time.Time
	keys  atomic.Pointer[api.Keys]

	// file and stamp are the key file as last read; only run's goroutine touches them.
	file  *SigningKeys
	stamp string
}

func newKeyWatcher(path string, grace time.Duration, log *slog.Logger) (*keyWatcher, error) {
	w := &keyWatcher{path: path, grace: grace, log: log, now: time.Now}
	stamp := fileStamp(path)
	k, err := LoadOrCreateKeys(path)
	if err != nil {
		return nil, err
	}
	if stamp == "" { // made just now
		stamp = fileStamp(path)
	}
	w.file, w.stamp = k, stamp
	w.keys.Store(k.ForAPI(w.now(), grace))
	log.Info("signing key", "fingerprint", keys.Fingerprint(k.Public()), "file", path,
		"rotations_in_grace", len(k.InGrace(w.now(), grace)))
	return w, nil
}

// current is the keys to sign and verify with now.
func (w *keyWatcher) current() *api.Keys { return w.keys.Load() }

// run looks at the key file every period until ctx ends. It also moves the keys on when a
// rotation's grace runs out, with no change to the file.
func (w *keyWatcher) run(ctx context.Context, every time.Duration) {
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			w.check()
		}
	}
}

// check reloads the key file if it changed, and retires what has passed its grace. A file that
// does not load is logged once and the keys served stay as they were: a controller never
// stops signing, nor signs with a key it could not read whole.
func (w *keyWatcher) check() {
	if stamp := fileStamp(w.path); stamp != w.stamp {
		w.stamp = stamp
		k, err := ReadKeys(w.path)
		if err != nil {
			w.log.Error("the signing key file changed but does not load; still signing with the key before",
				"file", w.path, "fingerprint", keys.Fingerprint(w.file.Public()), "err", err)
			return
		}
		w.changed(k)
	}
	next := w.file.ForAPI(w.now(), w.grace)
	w.retired(w.keys.Load(), next)
	w.keys.Store(next)
}

// changed logs a new key file: which key signs now instead of which, and whether the key
// before vouches for it, for if not, every host holding it will refuse what it signs.
func (w *keyWatcher) changed(k *SigningKeys) {
	old, now := w.file.Public(), k.Public()
	w.file = k
	if bytes.Equal(old, now) {
		return
	}
	chain := k.ForAPI(w.now(), w.grace).Chain
	if next, err := keys.FollowChain(old, chain); err == nil && bytes.Equal(next, now) {
		w.log.Info("signing with a rotated key", "old_fingerprint", keys.Fingerprint(old), "new_fingerprint", keys.Fingerprint(now),
			"vouches", len(chain))
		return
	}
	w.log.Warn("signing with a key the one before does not vouch for: hosts that hold the key before refuse what it signs until given the new HOSTD_CONTROLLER_KEY",
		"old_fingerprint", keys.Fingerprint(old), "new_fingerprint", keys.Fingerprint(now))
}

// retired logs every key honoured before and not now that the file still names: its grace ran
// out. (One a new file left out is the change that logged itself.)
func (w *keyWatcher) retired(before, now *api.Keys) {
	for _, k := range before.Honoured {
		honoured := slices.ContainsFunc(now.Honoured, func(h ed25519.PublicKey) bool { return h.Equal(k) })
		if r, ok := w.file.rotationFrom(k); !honoured && ok {
			w.log.Info("a rotated-away signing key is past its grace and retired: hosts that still hold it must be given the new HOSTD_CONTROLLER_KEY",
				"fingerprint", keys.Fingerprint(k), "grace_ended", r.Ends(w.grace).UTC().Format(time.RFC3339))
		}
	}
}

// fileStamp tells one version of a file from another: a rotation replaces the file, so its
// inode changes even when its size and time do not.
func fileStamp(path string) string {
	fi, err := os.Stat(path)
	if err != nil {
		return ""
	}
	var ino uint64
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		ino = st.Ino
	}
	return fmt.Sprintf("%d.%d.%d", ino, fi.ModTime().UnixNano(), fi.Size())
}
