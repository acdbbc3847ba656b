package hostd

import (
	"context"
	"fmt"
	"strings"

	"github.com/meshhq/hq"
)

// jobStep runs a container to completion once per digest of its spec, as an action runs a
// command: its success is remembered in the ledger, a non-zero exit is a failure (with the
// container's last lines) and, like an action, gates what follows. The container is removed
// once it has run; in a module that is not taken it does not run.
type jobStep struct{}

func (jobStep) check(_ context.Context, o *op) error {
	o.ctr = &containerOp{}
	if o.e.ledger.Actions[actionKey(o.ref, o.spec)] || !o.taken {
		o.equal = true
		if o.taken {
			o.record = actionEntry(o)
		}
	}
	return nil
}

func (jobStep) stage(context.Context, *op) error { return nil }

func (jobStep) commit(ctx context.Context, o *op) error {
	list, err := o.e.containerList(ctx)
	if err != nil {
		return err
	}
	cli := o.e.ctrs
	name := containerName(o.module, o.decl.Name)
	if ct, ok := list[name]; ok {
		if !ownedBy(ct, o.module, o.decl.Name) {
			return fmt.Errorf("a container named %s on this node belongs to %s, not to %s", name, owner(ct), o.ref)
		}
		cli.remove(ctx, name) // left by a run hostd did not see end
	}
	if _, err := o.e.createContainer(ctx, o, name); err != nil {
		return err
	}
	defer cli.remove(context.WithoutCancel(ctx), name)
	// start -a waits for the container and exits with its code; its output is the excerpt.
	if out, err := cli.cli.run(ctx, o.e.cfg.CommandTimeout, "start", "-a", name); err != nil {
		return fmt.Errorf("%w%s", err, lastLines(out))
	}
	o.committed = true
	o.e.ledger.Actions[actionKey(o.ref, o.spec)] = true
	o.record = &Entry{Kind: hq.KindJob, Spec: o.spec, Wrote: "ran"}
	o.e.setEntry(o.ref, o.record)
	if err := o.e.saveLedger(); err != nil {
		o.e.log.Error("a job ran but the ledger could not be saved", "resource", o.ref, "err", err)
		return fmt.Errorf("ran, but the ledger could not be saved (a restart of hostd before it is would run it again): %w", err)
	}
	return nil
}

// lastLines is the end of what a job wrote, after a separator, or "".
func lastLines(out []byte) string {
	s := strings.TrimSpace(string(out))
	if len(s) > maxOutput {
		s = "…" + s[len(s)-maxOutput:]
	}
	if s == "" {
		return ""
	}
	return "; it wrote: " + s
}

// undo cannot take back what a job did; it is its own gate for what follows.
func (jobStep) undo(context.Context, *op) error { return nil }

func (jobStep) finish(*op) {}
