package hostd

import (
	"context"
	"fmt"
	"maps"

	"github.com/meshhq/hq"
)

// serviceStep keeps a supervised process running with its current spec: started when it is
// not running, restarted when its spec or something in its restart_on changed, or when it died.
type serviceStep struct{}

func (serviceStep) check(ctx context.Context, o *op) error {
	p := o.e.sup.get(o.ref)
	o.present = p != nil && o.e.sup.running(p)
	if !o.present || p.spec != o.spec || o.restart {
		return nil
	}
	if !o.e.sup.healthy(p) {
		// It runs but did not answer its health check after the last start: look again
		// rather than restart it, which could only make a slow start slower.
		if err := o.e.sup.waitHealthy(ctx, p, o.e.cfg.HealthTimeout, o.e.cfg.StartGrace); err != nil {
			return err
		}
	} else if err := o.e.sup.checkHealth(ctx, p); err != nil {
		// It was healthy and no longer is: alive but hung. Commit restarts it, once.
		o.e.log.Warn("a running service failed its health check: restarting it", "resource", o.ref, "err", err)
		o.unhealthy = err
		return nil
	}
	o.equal = true
	o.record = serviceEntry(o)
	return nil
}

// serviceEntry is the ledger entry of a service as started (or found running) with its spec;
// a start clears a pending restart.
func serviceEntry(o *op) *Entry {
	if o.entry != nil && o.entry.Spec == o.spec && !o.entry.Restart {
		return o.entry
	}
	return &Entry{Kind: hq.KindService, Spec: o.spec, Wrote: "started"}
}

func (serviceStep) stage(context.Context, *op) error { return nil }

func (s serviceStep) commit(ctx context.Context, o *op) error {
	unhealthy := o.unhealthy
	o.unhealthy = nil
	err := s.restart(ctx, o)
	if err != nil && unhealthy != nil {
		return fmt.Errorf("%w; after a restart: %w", unhealthy, err)
	}
	return err
}

// restart starts o's service (stopping what runs) and waits for it to be healthy.
func (serviceStep) restart(ctx context.Context, o *op) error {
	// What the service does at start may change what a directory under the root resolves to.
	o.e.confiner.forget()
	// A process adopted from a record that does not say its spec cannot be started again.
	if p := o.e.sup.get(o.ref); p != nil && len(p.decl.Command) > 0 {
		prev := p.decl
		o.prevService, o.prevSecretEnv = &prev, p.secretEnv
	}
	// start stops what runs before anything else, so from here on undo has something to put back.
	o.committed, o.started = true, false
	l := resolveService(o.decl, o.e.cfg.Root)
	for k, name := range o.decl.SecretEnv {
		if l.secret == nil {
			l.secret = map[string]string{}
		}
		l.secret[k] = o.secrets[name]
	}
	p, err := o.e.sup.start(o.ref, o.decl, o.spec, l)
	if err != nil {
		return err
	}
	o.started = true
	o.record = serviceEntry(o)
	if err := o.e.sup.waitHealthy(ctx, p, o.e.cfg.HealthTimeout, o.e.cfg.StartGrace); err != nil {
		return err
	}
	return nil
}

// undo stops what commit started and, when it replaced a running process, starts that spec again.
func (serviceStep) undo(_ context.Context, o *op) error {
	if !o.committed {
		return nil
	}
	o.committed = false
	if o.prevService == nil {
		o.e.sup.stop(o.ref)
		return nil
	}
	prev := *o.prevService
	l := resolveService(prev, o.e.cfg.Root)
	if l.secret = o.prevSecretEnv; len(l.secret) < len(prev.SecretEnv) {
		// Adopted after a restart of hostd, it has no values held to start with again.
		o.e.sup.stop(o.ref)
		return fmt.Errorf("restarting the previous %s: the secret values it ran with are not held since hostd restarted", o.ref)
	}
	_, err := o.e.sup.start(o.ref, prev, prev.Digest(), l)
	if err != nil {
		return fmt.Errorf("restarting the previous %s: %w", o.ref, err)
	}
	return nil
}

func (serviceStep) finish(o *op) { o.prevService, o.prevSecretEnv = nil, nil }

// launch is a service's command and environment with {root} substituted, and the secret
// values its environment also gets.
type launch struct {
	args   []string
	env    map[string]string
	secret map[string]string
}

func resolveService(r hq.Resource, root string) launch {
	env := maps.Clone(r.Env)
	for k, v := range env {
		env[k] = substitute([]string{v}, root, "")[0]
	}
	return launch{args: substitute(r.Command, root, ""), env: env}
}
