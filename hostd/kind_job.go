package hostd

import (
	"context"
	"fmt"
	"strconv"
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
		if ct.Labels[labelSpec] == o.spec {
			if decided, err := adoptJob(ctx, o, name, ct); decided {
				return err
			}
		}
		cli.remove(ctx, name) // left by a run hostd did not see end, of another spec or never started
	}
	if _, err := o.e.createContainer(ctx, o, name); err != nil {
		return err
	}
	// start -a waits for the container and exits with its code; its output is the excerpt.
	err = cli.cli.runCombined(ctx, o.e.cfg.CommandTimeout, "start", "-a", name)
	if err != nil && ctx.Err() != nil {
		// hostd is stopping: the job runs on, for the next hostd to wait for (adoptJob).
		return fmt.Errorf("hostd stopped while the job ran; the next hostd waits for it: %w", err)
	}
	defer cli.remove(context.WithoutCancel(ctx), name)
	if err != nil {
		return err
	}
	return jobRan(o)
}

// adoptJob decides a job from the run of this spec an earlier hostd started and did not see
// end (hostd stopped or crashed while it ran): a job must not run twice for one crash. A run
// still going is waited for; one that ended is read for its exit code; either is then the
// result. decided is false when the run tells nothing: one created but never started is
// started afresh, and one in a state hostd cannot read an outcome from (paused, stopping) is
// run again from the start, with a note saying so.
func adoptJob(ctx context.Context, o *op, name string, ct container) (decided bool, err error) {
	cli := o.e.ctrs
	var code int
	switch ct.State {
	case "created", "configured", "initialized":
		return false, nil
	case "running":
		out, err := cli.cli.run(ctx, o.e.cfg.CommandTimeout, "wait", name)
		if err != nil {
			// Left as it is: the next reconcile waits for it again.
			return true, fmt.Errorf("waiting for the run an earlier hostd started: %w", err)
		}
		if code, err = strconv.Atoi(strings.TrimSpace(string(out))); err != nil {
			return true, fmt.Errorf("waiting for the run an earlier hostd started: %s wait said %q", cli.cli.path, strings.TrimSpace(string(out)))
		}
	case "exited", "stopped":
		code = ct.ExitCode
	default:
		o.ctr.note = fmt.Sprintf("job %s re-run: interrupted by a restart of hostd (its run was %s)", o.ref, ct.State)
		o.e.log.Warn("a job's earlier run cannot be read; running it again", "resource", o.ref, "state", ct.State)
		return false, nil
	}
	logs := cli.lastLogs(ctx, name)
	cli.remove(context.WithoutCancel(ctx), name)
	o.e.log.Info("a job an earlier hostd started has ended", "resource", o.ref, "exit_code", code)
	if code != 0 {
		return true, fmt.Errorf("exited with code %d (a run an earlier hostd started)%s", code, logs)
	}
	return true, jobRan(o)
}

// jobRan records that job o ran to success at its spec.
func jobRan(o *op) error {
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

// undo cannot take back what a job did; it is its own gate for what follows.
func (jobStep) undo(context.Context, *op) error { return nil }

func (jobStep) finish(*op) {}
