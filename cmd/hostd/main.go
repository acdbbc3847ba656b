// Command hostd is the host daemon: see package hostd.
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"text/tabwriter"

	"github.com/kelseyhightower/envconfig"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/hostd"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && hq.IsVersionFlag(args[0]) {
		fmt.Fprintln(stdout, "hostd", hq.Version())
		return 0
	}
	if len(args) > 0 && args[0] == "apply" {
		return apply(args[1:], stdout, stderr)
	}
	cfg, code, ok := configure(args, stdout, stderr)
	if !ok {
		return code
	}
	log := slog.New(slog.NewTextHandler(stderr, nil))
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	// After the first signal, a second one kills hostd at once instead of waiting on services.
	context.AfterFunc(ctx, stop)
	if err := hostd.Run(ctx, cfg, log); err != nil {
		log.Error("hostd failed", "err", err)
		return 1
	}
	return 0
}

// configure reads the arguments and the environment into a checked Config; when hostd must not
// run it has printed why (or the usage) and returns the exit code.
func configure(args []string, stdout, stderr io.Writer) (hostd.Config, int, bool) {
	var cfg hostd.Config
	unknown := func() (hostd.Config, int, bool) {
		fmt.Fprintf(stderr, "hostd: unknown arguments %q\n\n", args)
		usage(stderr, &cfg)
		return cfg, 2, false
	}
	switch {
	case len(args) == 0:
		usage(stderr, &cfg)
		return cfg, 2, false
	case isHelp(args[0]):
		usage(stdout, &cfg)
		return cfg, 0, false
	case args[0] != "run":
		return unknown()
	}
	flags := flag.NewFlagSet("hostd run", flag.ContinueOnError)
	flags.SetOutput(io.Discard) // the usage says it all
	stopServices := flags.Bool("stop-services-on-exit", false, "")
	err := flags.Parse(args[1:])
	switch {
	case errors.Is(err, flag.ErrHelp) || err == nil && flags.NArg() == 1 && isHelp(flags.Arg(0)):
		usage(stdout, &cfg)
		return cfg, 0, false
	case err != nil || flags.NArg() > 0:
		return unknown()
	}
	if err := envconfig.Process("hostd", &cfg); err != nil {
		fmt.Fprintln(stderr, "hostd:", err)
		return cfg, 2, false
	}
	cfg.StopServicesOnExit = cfg.StopServicesOnExit || *stopServices
	if err := cfg.Check(); err != nil {
		fmt.Fprintln(stderr, "hostd:", err)
		return cfg, 2, false
	}
	return cfg, 0, true
}

// applyEnv is what hostd apply reads of the environment: the daemon's root and state dir, and
// what names this node's containers and runs them.
type applyEnv struct {
	Root          string `envconfig:"ROOT" default:"/"`
	StateDir      string `envconfig:"STATE_DIR" default:"/var/lib/hostd"`
	Node          string `envconfig:"NODE"`
	ContainerCLI  string `envconfig:"CONTAINER_CLI"`
	NetworkPrefix string `envconfig:"CONTAINER_NETWORK_PREFIX" default:"hq-"`
}

// apply is hostd apply: one masterless reconcile from a local file. Its exit code is Puppet's
// detailed one (0 nothing changed, 2 changed, 4 failed, 6 both), and 1 when it could not
// apply at all (bad arguments, a file that does not check, the state dir in use).
func apply(args []string, stdout, stderr io.Writer) int {
	var cfg hostd.Config
	flags := flag.NewFlagSet("hostd apply", flag.ContinueOnError)
	flags.SetOutput(io.Discard)
	module := flags.String("module", "", "")
	take := flags.Bool("take", false, "")
	err := flags.Parse(args)
	switch {
	case errors.Is(err, flag.ErrHelp) || err == nil && flags.NArg() == 1 && isHelp(flags.Arg(0)):
		usage(stdout, &cfg)
		return 0
	case err != nil || flags.NArg() != 1:
		fmt.Fprintf(stderr, "hostd: apply takes [--module NAME] [--take] FILE, not %q\n\n", args)
		usage(stderr, &cfg)
		return 1
	}
	var env applyEnv
	if err := envconfig.Process("hostd", &env); err != nil {
		fmt.Fprintln(stderr, "hostd:", err)
		return 1
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	a, err := hostd.Apply(ctx, hostd.ApplyConfig{Root: env.Root, StateDir: env.StateDir, File: flags.Arg(0),
		Module: *module, Take: *take, Logger: log, Node: env.Node, ContainerCLI: env.ContainerCLI,
		ContainerNetworkPrefix: env.NetworkPrefix})
	if err != nil {
		fmt.Fprintln(stderr, "hostd apply:", err)
		return 1
	}
	bw := bufio.NewWriter(stdout)
	printApplied(bw, a)
	bw.Flush()
	return a.ExitCode()
}

// printApplied writes a line for every resource that did not simply stay as declared, then
// the report line.
func printApplied(w io.Writer, a hostd.Applied) {
	for _, r := range a.Results {
		ref := hq.Ref(r.Module, r.Resource)
		switch {
		case r.Outcome == hq.StateFailed:
			fmt.Fprintf(w, "failed %s: %s\n", ref, r.Error)
		case r.Outcome == hq.StateHeld:
			fmt.Fprintf(w, "held %s: %s\n", ref, r.HoldReason)
		case r.Outcome == hq.StatePending && r.BlockedBy != "":
			fmt.Fprintf(w, "pending %s: blocked by %s\n", ref, r.BlockedBy)
		case r.Outcome != hq.StateApplied:
			fmt.Fprintf(w, "%s %s\n", r.Outcome, ref)
		case r.Drift:
			fmt.Fprintf(w, "changed %s (drift put back: %s)\n", ref, r.DriftDetail)
		case r.Changed:
			fmt.Fprintf(w, "changed %s\n", ref)
		}
	}
	for _, ref := range a.Removed {
		fmt.Fprintf(w, "removed %s (no longer declared)\n", ref)
	}
	for _, ref := range a.NotRemoved {
		fmt.Fprintf(w, "failed to remove %s (no longer declared; see the log)\n", ref)
	}
	fmt.Fprintln(w, a.Line)
}

func isHelp(a string) bool { return a == "-h" || a == "-help" || a == "--help" || a == "help" }

func usage(w io.Writer, cfg *hostd.Config) {
	fmt.Fprint(w, `Usage: hostd run [--stop-services-on-exit]
       hostd apply [--module NAME] [--take] FILE

hostd reconciles this machine to the declaration the controller composes for this node,
and reports the outcome of every resource after every reconcile. It applies only what the
controller signed: give it the controller's key in HOSTD_CONTROLLER_KEY, or set
HOSTD_LEARN_KEY=1 to learn the key on first contact and keep it. When the controller's key
is rotated (hq key rotate), hostd follows to the new key if the key it holds vouches for it,
keeps it in the state dir and holds it from then on; see docs/security.md.

The services it supervises keep running when hostd stops or crashes, and the next start
re-adopts those whose spec is unchanged. --stop-services-on-exit (or
HOSTD_STOP_SERVICES_ON_EXIT=1) stops them all when hostd exits, for taking a node out of
service; see docs/agent.md.

hostd apply reconciles this machine once from FILE, without a controller, and exits:
a declaration (as the controller sends it) or a module file ({"resources":[…]}, as
PUT /modules takes it), whose module is named --module NAME or after the file (web.json
is module web), taken with --take (by default it holds what it would overwrite that it
did not write, as for an untaken module). The file is the operator's own: no key, no
signature. It uses HOSTD_ROOT and HOSTD_STATE_DIR (and HOSTD_NODE and HOSTD_CONTAINER_CLI
for containers) only, and the daemon's ledger, journal
and services; it refuses to run while a hostd run (or another apply) holds the state dir.
It reconciles only the modules FILE names, removes what they no longer declare, and
leaves the applied generation alone, so a later hostd run fences the controller's
declarations as before (and removes what the controller does not declare). It prints a
line for each resource that changed, failed or was held, then the report line, and exits
0 when nothing changed, 2 when something changed, 4 when something failed, 6 when both,
1 when it could not apply at all.

`)
	tw := tabwriter.NewWriter(w, 1, 0, 2, ' ', 0)
	envconfig.Usagef("hostd", cfg, tw, envconfig.DefaultTableFormat)
	tw.Flush()
}
