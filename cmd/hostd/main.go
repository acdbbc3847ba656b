// Command hostd is the host daemon: see package hostd.
package main

import (
	"context"
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
	var cfg hostd.Config
	switch {
	case len(args) == 0:
		usage(stderr, &cfg)
		return 2
	case isHelp(args[0]) || len(args) > 1 && args[0] == "run" && isHelp(args[1]):
		usage(stdout, &cfg)
		return 0
	case args[0] != "run" || len(args) > 1:
		fmt.Fprintf(stderr, "hostd: unknown arguments %q\n\n", args)
		usage(stderr, &cfg)
		return 2
	}
	if err := envconfig.Process("hostd", &cfg); err != nil {
		fmt.Fprintln(stderr, "hostd:", err)
		return 2
	}
	if err := cfg.Check(); err != nil {
		fmt.Fprintln(stderr, "hostd:", err)
		return 2
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

func isHelp(a string) bool { return a == "-h" || a == "-help" || a == "--help" || a == "help" }

func usage(w io.Writer, cfg *hostd.Config) {
	fmt.Fprint(w, `Usage: hostd run

hostd reconciles this machine to the declaration the controller composes for this node,
and reports the outcome of every resource after every reconcile. It applies only what the
controller signed: give it the controller's key in HOSTD_CONTROLLER_KEY, or set
HOSTD_LEARN_KEY=1 to learn the key on first contact and keep it.

`)
	tw := tabwriter.NewWriter(w, 1, 0, 2, ' ', 0)
	envconfig.Usagef("hostd", cfg, tw, envconfig.DefaultTableFormat)
	tw.Flush()
}
