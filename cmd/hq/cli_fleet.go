package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/meshhq/hq"
)

func placeFlags(fs *flag.FlagSet, o *cliRun) {
	fs.BoolVar(&o.taken, "taken", false, "the module may adopt what it finds on the nodes")
	fs.StringVar(&o.rollout, "rollout", "", `a rollout policy, JSON: '{"canary":1,"max_unavailable":"10%","failure_budget":0,"auto_revert":true}'`)
	fs.BoolVar(&o.remove, "delete", false, "delete the placement instead: its module leaves the nodes it put it on")
}

// cmdPlace puts a module on every node a selector matches: hq place NAME MODULE SELECTOR.
func cmdPlace(ctx context.Context, o *cliRun, args []string) error {
	if o.remove {
		if err := wantArgs(args, 1, "NAME"); err != nil {
			return err
		}
		if err := o.c.DeletePlacement(ctx, args[0]); err != nil {
			return err
		}
		return o.print(map[string]string{"deleted": args[0]}, func() []string {
			return []string{"placement " + args[0] + " deleted"}
		})
	}
	if err := wantArgs(args, 3, "NAME MODULE SELECTOR"); err != nil {
		return err
	}
	p := hq.Placement{Name: args[0], Module: args[1], Selector: args[2], Taken: o.taken}
	if o.rollout != "" {
		p.Rollout = &hq.RolloutPolicy{}
		if err := json.Unmarshal([]byte(o.rollout), p.Rollout); err != nil {
			return usageError("--rollout is not a rollout policy: " + err.Error())
		}
	}
	got, err := o.c.PutPlacement(ctx, p)
	if err != nil {
		return err
	}
	return o.print(got, func() []string {
		return []string{fmt.Sprintf("placement %s: %s on %q, %d node(s) matched, %d assigned", got.Name, got.Module, got.Selector, got.Matched, got.Assigned)}
	})
}

func rolloutFlags(fs *flag.FlagSet, o *cliRun) {
	fs.Int64Var(&o.to, "to", 0, "rollback: the revision of the placement's module to go back to")
	fs.DurationVar(&o.every, "every", time.Second, "watch: how often to read the rollout")
}

// rolloutVerbs are what hq rollout does to one rollout, by its id: "" reads it.
var rolloutVerbs = map[string]string{"show": "", "pause": "pause", "resume": "resume", "promote": "promote", "abort": "abort"}

// cmdRollout lists rollouts, or shows, watches, pauses, resumes, promotes or aborts one, or
// rolls a placement back: hq rollout list | VERB ID | rollback PLACEMENT --to N.
func cmdRollout(ctx context.Context, o *cliRun, args []string) error {
	if len(args) == 1 && args[0] == "list" {
		rs, err := o.c.Rollouts(ctx)
		if err != nil {
			return err
		}
		return o.print(map[string][]hq.Rollout{"rollouts": rs}, func() []string {
			lines := make([]string, len(rs))
			for i, r := range rs {
				lines[i] = fmt.Sprintf("%d  %s", r.ID, r.MakeLine())
			}
			return lines
		})
	}
	if len(args) == 2 && args[0] == "rollback" {
		if o.to < 1 {
			return usageError("rollback wants --to N, the revision to go back to")
		}
		r, err := o.c.RollbackPlacement(ctx, args[1], o.to)
		if err != nil {
			return err
		}
		return o.print(r, func() []string { return append([]string{fmt.Sprintf("rollout %d started", r.ID)}, rolloutLines(r)...) })
	}
	verb, known := rolloutVerbs[args0(args)]
	if len(args) != 2 || !known && args[0] != "watch" {
		return usageError("want list, show|watch|pause|resume|promote|abort ID, or rollback PLACEMENT --to N")
	}
	id, err := strconv.ParseInt(args[1], 10, 64)
	if err != nil {
		return usageError(fmt.Sprintf("a rollout is a number, not %q", args[1]))
	}
	if args[0] == "watch" {
		return watchRollout(ctx, o, id)
	}
	r, err := o.c.Rollout(ctx, id, verb)
	if err != nil {
		return err
	}
	return o.print(r, func() []string { return rolloutLines(r) })
}

func args0(args []string) string {
	if len(args) == 0 {
		return ""
	}
	return args[0]
}

// rolloutLines are a rollout's line, then a node a line in aligned columns: its wave, or
// "waiting" while its wave has not started, its state and why.
func rolloutLines(r hq.Rollout) []string {
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 1, 0, 2, ' ', 0)
	for _, n := range r.Progress {
		wave := "waiting"
		if n.StartedAt != nil {
			wave = fmt.Sprintf("wave %d", n.Wave)
		}
		state := n.State
		if n.Reason != "" {
			state += ": " + n.Reason
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\n", n.Node, wave, state)
	}
	tw.Flush()
	lines := []string{r.MakeLine()}
	for l := range strings.SplitSeq(strings.TrimRight(b.String(), "\n"), "\n") {
		if l != "" {
			lines = append(lines, strings.TrimRight(l, " "))
		}
	}
	return lines
}
