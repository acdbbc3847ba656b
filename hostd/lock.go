package hostd

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// lockFile is the name, in the state dir, of the lock every hostd run and hostd apply holds
// while it uses that state dir: two of them would interleave their ledger and journal writes.
const lockFile = "lock"

// ErrStateDirInUse is the error when another hostd holds the state dir's lock.
var ErrStateDirInUse = errors.New("state dir in use")

// stateLock is the state dir's lock, held until release. The kernel drops it when the process
// ends, however it ends, so a crash never leaves a stale lock behind; the descriptor is not
// inherited by what hostd starts (Go opens files close-on-exec), so a service that outlives
// hostd does not keep it either.
type stateLock struct{ f *os.File }

// lockStateDir takes the lock of stateDir (creating the dir) without waiting. When another
// process holds it, the error wraps ErrStateDirInUse and names that process's pid.
func lockStateDir(stateDir string) (*stateLock, error) {
	if err := os.MkdirAll(stateDir, 0o700); err != nil {
		return nil, fmt.Errorf("state dir: %w", err)
	}
	name := filepath.Join(stateDir, lockFile)
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("state dir lock: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		defer f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			holder := "another process"
			if b, rerr := os.ReadFile(name); rerr == nil {
				if pid, perr := strconv.Atoi(strings.TrimSpace(string(b))); perr == nil && pid > 0 {
					holder = "hostd pid " + strconv.Itoa(pid)
				}
			}
			return nil, fmt.Errorf("%w: %s holds %s (a hostd run or hostd apply on the same HOSTD_STATE_DIR); stop it first", ErrStateDirInUse, holder, name)
		}
		return nil, fmt.Errorf("state dir lock %s: %w", name, err)
	}
	// The pid is for the message above only; the lock is the flock, not the file's content.
	if err := f.Truncate(0); err == nil {
		f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return &stateLock{f: f}, nil
}

// release drops the lock. The file stays: removing it would let a third process lock a new
// file while a second still waits on the old one.
func (l *stateLock) release() {
	if l != nil && l.f != nil {
		l.f.Close()
		l.f = nil
	}
}
