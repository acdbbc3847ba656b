// Command hq-loadgen runs a hollow fleet: many simulated hosts, over loopback, against real
// hq serve processes on one database that it starts itself (-hq, -controllers) or that already
// run (-url, -token). The hosts speak only the HTTP API, as hostd would. See docs/testing.md,
// "The hollow fleet".
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
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/meshhq/hq/loadgen"
)

func main() {
	// The generator's own collector shares the cores with the controller, and while it marks,
	// its hosts' requests wait in its assists: time counted as the controller's latency, and
	// with a fleet's worth of hosts each collection marks for a long while. Memory here is
	// cheap, so unless GOGC says otherwise it lets its heap grow to 20 times what is live, and
	// collects before each phase (Fleet.measure), so that a phase sees few collections or none.
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
		phases  = fs.String("phases", strings.Join(loadgen.DefaultPhases, ","), "phases to run, comma-separated: "+strings.Join(loadgen.Phases, ", ")+" (register, assign and apply run whenever a later phase needs them; failover, with -hq and -controllers 2 or more, kills the first controller a third of the way into a steady run)")
		hqBin   = fs.String("hq", "", "the hq binary to start on a temporary database (build it with go build ./cmd/hq); or give -url and -token")
		nctl    = fs.Int("controllers", 1, "with -hq, how many controllers to start on the one database; host i speaks to controller i mod N")
		addr    = fs.String("addr", "127.0.0.1:0", "with -hq, where the controller listens; with -controllers, a port-0 address for all or a comma-separated list, one per controller")
		keep    = fs.Bool("keep", false, "with -hq, keep the controllers' directory (database, logs) and say where it is")
		ctlEnv  envFlag
		pg      = fs.String("postgres", "", "with -hq, run the controllers on this PostgreSQL database (a postgres:// URL) rather than a SQLite file, and count the server's CPU apart")
		urls    = fs.String("url", "", "hq serve processes already running on one database, comma-separated, e.g. http://127.0.0.1:8080")
		pids    = fs.String("pid", "", "with -url, the controllers' process ids, comma-separated in the order of -url, for their CPU and memory (and their database, found from the first's environment)")
		output  = fs.String("o", "text", "output: text (a line per phase) or json")
		timeout = fs.Duration("timeout", 30*time.Minute, "the whole run stops after this long, whatever it is doing")
	)
	fs.Var(&ctlEnv, "env", "with -hq, KEY=VALUE added to the controllers' environment (and not the generator's), e.g. GOMEMLIMIT=400MiB; may be repeated")
	fs.IntVar(&cfg.Nodes, "nodes", 200, "simulated hosts")
	fs.IntVar(&cfg.Resources, "resources", 500, "files in the module every node is assigned")
	fs.Float64Var(&cfg.SteadyRate, "steady-rate", 100, "reports/s of the whole fleet in steady (overload is 3× this)")
	fs.DurationVar(&cfg.SteadyFor, "steady-for", 30*time.Second, "how long steady lasts")
	fs.DurationVar(&cfg.OverloadFor, "overload-for", 30*time.Second, "how long overload lasts; recovery at the steady rate follows")
	fs.DurationVar(&cfg.RecoverFor, "recover-for", 10*time.Second, "how long recovery lasts after overload")
	fs.IntVar(&cfg.Concurrency, "concurrency", 16, "requests at once in register, assign and apply")
	fs.StringVar(&cfg.Token, "token", os.Getenv("HQ_ADMIN_TOKEN"), "with -url, the operator's token (default $HQ_ADMIN_TOKEN)")
	fs.StringVar(&cfg.DB, "db", "", "with -url, the controllers' database file, for its size")
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
	case (*hqBin == "") == (*urls == ""):
		return fail("give either -hq (controllers to start) or -url and -token (controllers that run)")
	case *urls != "" && cfg.Token == "":
		return fail("-url needs -token (or HQ_ADMIN_TOKEN)")
	case *nctl < 1:
		return fail("-controllers must be at least 1")
	case *pids != "" && *urls == "":
		return fail("-pid goes with -url")
	}
	var addrs []string
	if *hqBin != "" {
		addrs = list(*addr)
		switch {
		case len(addrs) == 0:
			return fail("-addr is empty")
		case len(addrs) > 1 && len(addrs) != *nctl:
			return fail("-addr lists %d address(es) for %d controller(s)", len(addrs), *nctl)
		case len(addrs) == 1 && *nctl > 1 && !strings.HasSuffix(addrs[0], ":0"):
			return fail("-controllers %d cannot all listen on %s: give port 0 or one address each", *nctl, addrs[0])
		}
	} else {
		cfg.URLs = list(*urls)
		if *nctl != 1 && *nctl != len(cfg.URLs) {
			return fail("-controllers %d but -url lists %d", *nctl, len(cfg.URLs))
		}
		for _, p := range list(*pids) {
			pid, err := strconv.Atoi(p)
			if err != nil || pid < 1 {
				return fail("-pid: %q is not a process id", p)
			}
			cfg.Pids = append(cfg.Pids, pid)
		}
		if len(cfg.Pids) > 0 && len(cfg.Pids) != len(cfg.URLs) {
			return fail("-pid lists %d process(es) for %d -url(s)", len(cfg.Pids), len(cfg.URLs))
		}
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
			defer fmt.Fprintf(stderr, "hq-loadgen: the controllers' database and logs are in %s\n", dir)
		} else {
			defer os.RemoveAll(dir)
		}
		env := []string(ctlEnv)
		if *pg != "" {
			env = append(env, "HQ_DB="+*pg, "HQ_KEY_FILE="+filepath.Join(dir, "hq.key"), "HQ_SECRETS_KEY_FILE="+filepath.Join(dir, "hq.secrets.key"))
		}
		token := rand.Text()
		ctls, err := loadgen.StartControllers(*hqBin, dir, *nctl, addrs, token, env...)
		if err != nil {
			return fail("%v", err)
		}
		// Stopped together: one by one, the last would wait out the others' shutdowns.
		defer func() {
			var wg sync.WaitGroup
			for _, c := range ctls {
				wg.Go(c.Stop)
			}
			wg.Wait()
		}()
		cfg.Token, cfg.DB = token, ctls[0].DB
		cfg.Kill = func(ctl int) error {
			if ctl < 0 || ctl >= len(ctls) {
				return fmt.Errorf("no controller #%d", ctl+1)
			}
			ctls[ctl].Kill()
			return nil
		}
		for _, c := range ctls {
			cfg.URLs, cfg.Pids = append(cfg.URLs, c.URL), append(cfg.Pids, c.Pid())
		}
		if *pg != "" {
			cfg.DB, cfg.DBProcess, cfg.Postgres = "", "postgres", *pg
		}
	} else if len(cfg.Pids) > 0 && cfg.DB == "" {
		cfg.DB = loadgen.DBPathOf(cfg.Pids[0])
	}

	var results []loadgen.PhaseResult
	if *output == "text" {
		against := cfg.URLs[0]
		if len(cfg.URLs) > 1 {
			// Numbered as each phase's line numbers the controllers' shares.
			var each []string
			for i, u := range cfg.URLs {
				each = append(each, fmt.Sprintf("#%d %s", i+1, u))
			}
			against = fmt.Sprintf("%d controllers on one database (%s)", len(cfg.URLs), strings.Join(each, ", "))
		}
		fmt.Fprintf(stdout, "hq-loadgen: %d node(s) × %d resource(s) against %s, phases %s; steady %.0f reports/s for %s, overload %.0f/s for %s\n",
			cfg.Nodes, cfg.Resources, against, strings.Join(cfg.Phases, ","), cfg.SteadyRate, cfg.SteadyFor, 3*cfg.SteadyRate, cfg.OverloadFor)
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

// list splits a comma-separated flag, dropping blanks.
func list(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
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
