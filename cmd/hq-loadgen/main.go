// Command hq-loadgen runs a hollow fleet: many simulated hosts, over loopback, against a real
// hq serve that it starts itself (-hq) or that already runs (-url, -token). The hosts speak
// only the HTTP API, as hostd would. See docs/testing.md, "The hollow fleet".
package main

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/meshhq/hq/loadgen"
)

func main() {
	// The generator's own collector shares the cores with the controller, and while it marks,
	// its hosts' requests wait in its assists: time counted as the controller's latency. With
	// a fleet's worth of hosts it collects every two seconds at the default, and every 15 s
	// at 400, each collection marking for half a second. Memory here is cheap, so unless GOGC
	// says otherwise it lets its heap grow to 20 times what is live (up to 4 GB at 10,000 ×
	// 500), and collects before each phase (Fleet.measure): a steady minute then saw none.
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(2000)
	}
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("hq-loadgen", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		cfg     loadgen.Config
		phases  = fs.String("phases", strings.Join(loadgen.Phases, ","), "phases to run, comma-separated: "+strings.Join(loadgen.Phases, ", ")+" (register, assign and apply run whenever a later phase needs them)")
		hqBin   = fs.String("hq", "", "the hq binary to start on a temporary database (build it with go build ./cmd/hq); or give -url and -token")
		addr    = fs.String("addr", "127.0.0.1:0", "with -hq, where the controller listens")
		keep    = fs.Bool("keep", false, "with -hq, keep the controller's directory (database, log) and say where it is")
		ctlEnv  envFlag
		pg      = fs.String("postgres", "", "with -hq, run the controller on this PostgreSQL database (a postgres:// URL) rather than a SQLite file, and count the server's CPU apart")
		output  = fs.String("o", "text", "output: text (a line per phase) or json")
		timeout = fs.Duration("timeout", 30*time.Minute, "the whole run stops after this long, whatever it is doing")
	)
	fs.Var(&ctlEnv, "env", "with -hq, KEY=VALUE added to the controller's environment (and not the generator's), e.g. GOMEMLIMIT=400MiB; may be repeated")
	fs.IntVar(&cfg.Nodes, "nodes", 200, "simulated hosts")
	fs.IntVar(&cfg.Resources, "resources", 500, "files in the module every node is assigned")
	fs.Float64Var(&cfg.SteadyRate, "steady-rate", 100, "reports/s of the whole fleet in steady (overload is 3× this)")
	fs.DurationVar(&cfg.SteadyFor, "steady-for", 30*time.Second, "how long steady lasts")
	fs.DurationVar(&cfg.OverloadFor, "overload-for", 30*time.Second, "how long overload lasts; recovery at the steady rate follows")
	fs.DurationVar(&cfg.RecoverFor, "recover-for", 10*time.Second, "how long recovery lasts after overload")
	fs.IntVar(&cfg.Concurrency, "concurrency", 16, "requests at once in register, assign and apply")
	fs.StringVar(&cfg.URL, "url", "", "an hq serve already running, e.g. http://127.0.0.1:8080")
	fs.StringVar(&cfg.Token, "token", os.Getenv("HQ_ADMIN_TOKEN"), "with -url, the operator's token (default $HQ_ADMIN_TOKEN)")
	fs.IntVar(&cfg.Pid, "pid", 0, "with -url, the controller's process id, for its CPU and memory (and its database, found from its environment)")
	fs.StringVar(&cfg.DB, "db", "", "with -url, the controller's database file, for its size")
	fs.StringVar(&cfg.Prefix, "prefix", "", "node names start with this (default lg-<random>-)")
	fs.StringVar(&cfg.Module, "module", "", "the module's name (default loadgen-<random>)")
	fs.DurationVar(&cfg.Wait, "wait", 30*time.Second, "each long-poll's wait")
	fs.IntVar(&cfg.Polls, "polls", 0, "hosts that hold a long-poll once applied (0: all); the others only report, for a fleet larger than the connections a process may hold (ulimit -n); revision waits for those that poll")
	fs.DurationVar(&cfg.PhaseTimeout, "phase-timeout", 10*time.Minute, "bound on each phase that runs until it is done")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	fail := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "hq-loadgen: "+format+"\n", a...)
		return 1
	}
	for _, p := range strings.Split(*phases, ",") {
		if p = strings.TrimSpace(p); p == "" {
			continue
		}
		if !slices.Contains(loadgen.Phases, p) {
			return fail("no phase %q (phases: %s)", p, strings.Join(loadgen.Phases, ", "))
		}
		cfg.Phases = append(cfg.Phases, p)
	}
	switch {
	case *output != "text" && *output != "json":
		return fail("-o is text or json")
	case cfg.Nodes < 1 || cfg.Resources < 1:
		return fail("-nodes and -resources must be at least 1")
	case (*hqBin == "") == (cfg.URL == ""):
		return fail("give either -hq (a controller to start) or -url and -token (one that runs)")
	case cfg.URL != "" && cfg.Token == "":
		return fail("-url needs -token (or HQ_ADMIN_TOKEN)")
	}
	suffix := strings.ToLower(rand.Text()[:6])
	if cfg.Prefix == "" {
		cfg.Prefix = "lg-" + suffix + "-"
	}
	if cfg.Module == "" {
		cfg.Module = "loadgen-" + suffix
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()

	if *hqBin != "" {
		dir, err := os.MkdirTemp("", "hq-loadgen-")
		if err != nil {
			return fail("%v", err)
		}
		if *keep {
			defer fmt.Fprintf(stderr, "hq-loadgen: the controller's database and log are in %s\n", dir)
		} else {
			defer os.RemoveAll(dir)
		}
		env := []string(ctlEnv)
		if *pg != "" {
			env = append(env, "HQ_DB="+*pg, "HQ_KEY_FILE="+filepath.Join(dir, "hq.key"))
		}
		ctl, err := loadgen.StartController(*hqBin, dir, *addr, rand.Text(), env...)
		if err != nil {
			return fail("%v", err)
		}
		defer ctl.Stop()
		cfg.URL, cfg.Token, cfg.Pid, cfg.DB = ctl.URL, ctl.Token, ctl.Pid(), ctl.DB
		if *pg != "" {
			cfg.DB, cfg.DBProcess = "", "postgres"
		}
	} else if cfg.Pid > 0 && cfg.DB == "" {
		cfg.DB = loadgen.DBPathOf(cfg.Pid)
	}

	var results []loadgen.PhaseResult
	if *output == "text" {
		fmt.Fprintf(stdout, "hq-loadgen: %d node(s) × %d resource(s) against %s, phases %s; steady %.0f reports/s for %s, overload %.0f/s for %s\n",
			cfg.Nodes, cfg.Resources, cfg.URL, strings.Join(cfg.Phases, ","), cfg.SteadyRate, cfg.SteadyFor, 3*cfg.SteadyRate, cfg.OverloadFor)
	}
	err := loadgen.NewFleet(cfg).Run(ctx, func(r loadgen.PhaseResult) {
		results = append(results, r)
		if *output == "text" {
			fmt.Fprintln(stdout, r.Line())
		}
	})
	if *output == "json" {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		enc.Encode(struct {
			Nodes       int                   `json:"nodes"`
			Resources   int                   `json:"resources"`
			SteadyRate  float64               `json:"steady_rate"`
			SteadyFor   time.Duration         `json:"steady_for_ns"`
			OverloadFor time.Duration         `json:"overload_for_ns"`
			Phases      []loadgen.PhaseResult `json:"phases"`
			Error       string                `json:"error,omitempty"`
		}{cfg.Nodes, cfg.Resources, cfg.SteadyRate, cfg.SteadyFor, cfg.OverloadFor, results, errString(err)})
	}
	if err != nil {
		return fail("%v", err)
	}
	return 0
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// envFlag collects KEY=VALUE settings, one per use of the flag.
type envFlag []string

func (e *envFlag) String() string { return strings.Join(*e, " ") }

func (e *envFlag) Set(v string) error {
	if k, _, ok := strings.Cut(v, "="); !ok || k == "" {
		return fmt.Errorf("%q is not KEY=VALUE", v)
	}
	*e = append(*e, v)
	return nil
}
