package hostd

import (
	"context"
	"crypto/ed25519"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/meshhq/hq"
)

const keyFile = "controller.key"

// incoming is a declaration the poller received, with the error verifying it, if any.
type incoming struct {
	d   *hq.Declaration
	err error
}

// poller long-polls the controller for declarations newer than the highest generation it has
// seen, verifying each before handing it on. It alone holds the pinned key.
type poller struct {
	c        *client
	node     string
	wait     time.Duration
	stateDir string
	log      *slog.Logger
	key      ed25519.PublicKey
	after    int64
	out      chan<- incoming
}

// loadKey returns the pinned key: the configured one, else the one learned earlier, else nil.
func loadKey(configured, stateDir string) (ed25519.PublicKey, error) {
	if configured != "" {
		return parseKey(configured)
	}
	b, err := os.ReadFile(filepath.Join(stateDir, keyFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return parseKey(strings.TrimSpace(string(b)))
}

func (p *poller) run(ctx context.Context) {
	retry := time.Second
	// backOff waits before the next poll, longer each time, and reports whether to go on.
	backOff := func() bool {
		select {
		case <-ctx.Done():
			return false
		case <-time.After(retry):
		}
		retry = min(retry*2, 30*time.Second)
		return true
	}
	for ctx.Err() == nil {
		if p.key == nil {
			p.learnKey(ctx)
		}
		d, err := p.c.declaration(ctx, p.after, p.wait)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			p.log.Warn("fetching declaration", "err", err, "retry_in", retry)
			if !backOff() {
				return
			}
			continue
		}
		if d == nil {
			retry = time.Second
			continue
		}
		verr := Verify(d, p.node, p.key)
		select {
		case p.out <- incoming{d: d, err: verr}:
		case <-ctx.Done():
			return
		}
		if verr != nil {
			// A declaration that does not verify says nothing true about its generation: moving
			// after on would let one forged number fence this host out. Ask again, slower.
			if !backOff() {
				return
			}
			continue
		}
		retry = time.Second
		// A verified one moves after on even when it is refused as stale, or the controller
		// would send it again at once.
		p.after = max(p.after, d.Generation)
	}
}

// learnKey pins the controller's key on first contact and keeps it in the state dir, so that
// from then on only declarations it signed are applied.
func (p *poller) learnKey(ctx context.Context) {
	s, err := p.c.controllerKey(ctx)
	if err != nil {
		if !errors.Is(err, errNoKey) && ctx.Err() == nil {
			p.log.Debug("fetching controller key", "err", err)
		}
		return
	}
	key, err := parseKey(s)
	if err != nil {
		p.log.Warn("controller key unusable", "err", err)
		return
	}
	if err := writeFileAtomic(filepath.Join(p.stateDir, keyFile), []byte(s+"\n"), 0o600); err != nil {
		p.log.Error("saving controller key", "err", err)
		return
	}
	p.key = key
	p.log.Info("pinned the controller key")
}
