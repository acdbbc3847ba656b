package hostd

import (
	"context"
	"fmt"

	"github.com/meshhq/hq"
)

// actionStep runs a command once per digest of its spec. Success is remembered in the ledger
// (and saved at once, so a crash right after does not run it twice); a failure is not, so the
// action is tried again.
type actionStep struct{}

func (actionStep) check(_ context.Context, o *op) error {
	if o.e.ledger.Actions[actionKey(o.ref, o.spec)] {
		o.equal = true
		o.record = actionEntry(o)
	}
	return nil
}

func actionEntry(o *op) *Entry {
	if o.entry != nil && o.entry.Spec == o.spec {
		return o.entry
	}
	return &Entry{Kind: hq.KindAction, Spec: o.spec, Wrote: "ran"}
}

func (actionStep) stage(context.Context, *op) error { return nil }

func (actionStep) commit(ctx context.Context, o *op) error {
	// The command may change what a directory under the root resolves to.
	o.e.confiner.forget()
	args := substitute(o.decl.Command, o.e.cfg.Root, "")
	if err := runCommand(ctx, o.e.cfg.CommandTimeout, o.e.cfg.Root, args); err != nil {
		return err
	}
	o.committed = true
	o.e.ledger.Actions[actionKey(o.ref, o.spec)] = true
	o.record = actionEntry(o)
	o.e.setEntry(o.ref, o.record)
	if err := o.e.saveLedger(); err != nil {
		// It ran and is remembered in memory, so it does not run again in this process; but
		// a crash before the next save would run it twice, which the result must show.
		o.e.log.Error("an action ran but the ledger could not be saved", "resource", o.ref, "err", err)
		return fmt.Errorf("ran, but the ledger could not be saved (a restart of hostd before it is would run it again): %w", err)
	}
	return nil
}

// undo cannot take back what a command did; an action is its own gate for what follows.
func (actionStep) undo(context.Context, *op) error { return nil }

func (actionStep) finish(*op) {}
