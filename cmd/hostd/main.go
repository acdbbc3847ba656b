// Command hostd is the host daemon: see package hostd.
package main

import (
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

	"github.com/meshhq/hq/hostd"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
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

func isHelp(a string) bool { return a == "-h" || a == "-help" || a == "--help" || a == "help" }

func usage(w io.Writer, cfg *hostd.Config) {
	fmt.Fprint(w, `Usage: hostd run [--stop-services-on-exit]

hostd reconciles this machine to the declaration the controller composes for this node,
and reports the outcome of every resource after every reconcile. It applies only what the
controller signed: give it the controller's key in HOSTD_CONTROLLER_KEY, or set
HOSTD_LEARN_KEY=1 to learn the key on first contact and keep it.

The services it supervises keep running when hostd stops or crashes, and the next start
re-adopts those whose spec is unchanged. --stop-services-on-exit (or
HOSTD_STOP_SERVICES_ON_EXIT=1) stops them all when hostd exits, for taking a node out of
service; see docs/agent.md.

`)
	tw := tabwriter.NewWriter(w, 1, 0, 2, ' ', 0)
	envconfig.Usagef("hostd", cfg, tw, envconfig.DefaultTableFormat)
	tw.Flush()
}
