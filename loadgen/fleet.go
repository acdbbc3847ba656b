package loadgen

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/meshhq/hq"
)

// The phases, in the order they run.
const (
	PhaseRegister = "register"
	PhaseAssign   = "assign"
	PhaseApply    = "apply"
	PhaseSteady   = "steady"
	PhaseRevision = "revision"
	PhaseOverload = "overload"
	// PhaseRecovery follows overload: the steady rate again, to see the controller recover.
	PhaseRecovery = "recovery"
	// PhaseFailover is the steady rate with the first controller killed a third of the way in.
	PhaseFailover = "failover"
)

// Phases lists every phase that can be asked for, and DefaultPhases those run unless others
// are asked for: failover needs controllers to kill.
var (
	Phases        = []string{PhaseRegister, PhaseAssign, PhaseApply, PhaseSteady, PhaseRevision, PhaseOverload, PhaseFailover}
	DefaultPhases = Phases[:len(Phases)-1]
)

// Config is what a fleet run does.
type Config struct {
	// URLs are the controllers, http://host:port, all on one database. Host i speaks to
	// URLs[i mod len(URLs)] for everything, its registration too, so that the hosts' load is
	// split evenly; the operator's other calls (uploads, assignments, /status, the status page)
	// go to the first.
	URLs  []string
	Token string // the operator's token, the same on every controller
	// Pids are the controllers' processes, in the order of URLs, for their CPU and memory;
	// none, or a 0, leaves them out. DB is their database file, for its size; "" leaves it out.
	Pids []int
	DB   string
	// DBProcess names the database server's processes (postgres) when the controllers run on
	// one: their CPU is the controllers' work too, and each phase counts it apart. "" for
	// SQLite, which runs inside the controller.
	DBProcess string
	// Postgres is the controllers' PostgreSQL database (a URL), when they run on one: each
	// phase reads the server's write-ahead log position before and after it, for the bytes of
	// log the phase wrote (the whole server's: run nothing else on it).
	Postgres string

	Nodes     int
	Resources int
	// Prefix starts every node name, Module names the module; both so that a run against a
	// controller that is already in use stays apart from what is there.
	Prefix string
	Module string

	SteadyRate  float64 // reports/s over the whole fleet
	SteadyFor   time.Duration
	OverloadFor time.Duration // at 3× SteadyRate
	RecoverFor  time.Duration // at SteadyRate, after the overload
	Concurrency int           // requests at once in register, assign and apply
	Wait        time.Duration // each long-poll's wait
	// Polls is how many hosts hold a long-poll once applied (0: all). The others only report,
	// so a fleet can be larger than the connections one process may hold; the revision phase
	// then waits for the hosts that poll.
	Polls int
	// PhaseTimeout bounds the phases that run until something is done (register, assign,
	// apply, revision).
	PhaseTimeout time.Duration
	// Phases to run; register, assign and apply run whenever a later phase needs them.
	Phases []string
	// Kill ends the controller at place ctl in URLs as a crash would (kill -9), for the
	// failover phase; nil when the generator did not start the controllers.
	Kill func(ctl int) error
}

// PhaseResult is one phase's figures.
type PhaseResult struct {
	Phase string        `json:"phase"`
	Wall  time.Duration `json:"wall_ns"`
	// Count is what the phase did: nodes (register, assign, apply, revision) or acknowledged
	// reports (steady, overload, recovery); Rate is Count over Wall.
	Count int     `json:"count"`
	Unit  string  `json:"unit"`
	Rate  float64 `json:"rate"`
	// Target is how many reports a timed phase's rate asks for over its duration; Offered how
	// many were started (a host still busy with its last report skips the ones it missed);
	// Late how many started after the host's next one was due; AckedByEnd how many were
	// acknowledged by the end of the phase's duration (the rest while it waited for those in
	// flight and retrying).
	Target     int `json:"target,omitempty"`
	Offered    int `json:"offered,omitempty"`
	Late       int `json:"late,omitempty"`
	AckedByEnd int `json:"acked_by_end,omitempty"`
	// Converged is, for revision, the time from the upload until the last node reported the new
	// generation; Put is the upload's own time.
	Converged time.Duration `json:"converged_ns,omitempty"`
	Put       time.Duration `json:"put_ns,omitempty"`

	// CPU is the controllers' user+system time during the phase, summed over them, and Cores
	// that over the wall time; both are left 0 unless every controller could be sampled.
	CPU time.Duration `json:"cpu_ns"`
	// DBCPU is the database server's user+system time during the phase (Config.DBProcess).
	DBCPU time.Duration `json:"db_cpu_ns,omitempty"`
	// DBWAL is the bytes of write-ahead log the database server wrote during the phase
	// (Config.Postgres).
	DBWAL int64   `json:"db_wal_bytes,omitempty"`
	Cores float64 `json:"cores"`
	RSS   int64   `json:"rss_bytes"` // the controllers' resident size at the end, summed
	// HWM is the controllers' peak resident sizes during the phase (during their lifetime when
	// the peak could not be reset), summed: each peaks when it will, so with more than one
	// controller this bounds their peak together from above. StatusHWM and PageHWM are the
	// first controller's peak while it served each view.
	HWM       int64 `json:"hwm_bytes"`
	StatusHWM int64 `json:"status_hwm_bytes,omitempty"`
	PageHWM   int64 `json:"page_hwm_bytes,omitempty"`
	// Controllers is each controller's share, in the order of Config.URLs, when there are more
	// than one (with one, the figures above are its own).
	Controllers []ControllerResult `json:"controllers,omitempty"`
	// LateCPU is, for a phase of reports at a rate, the controllers' CPU from its midpoint to
	// its end, and LateReports the reports acknowledged in that time: a fleet's first reports
	// after an apply are read whole, and in the first seconds of steady they cost more than
	// the repeats that follow. Both are 0 when the controllers could not be sampled.
	LateCPU     time.Duration `json:"late_cpu_ns,omitempty"`
	LateReports int           `json:"late_reports,omitempty"`
	// LoadgenCPU is the generator's own CPU time in the phase, and Load the machine's
	// one-minute load average at its end: the generator and the controller share the machine.
	LoadgenCPU time.Duration `json:"loadgen_cpu_ns"`
	Load       float64       `json:"load"`
	DB         int64         `json:"db_bytes"`
	WAL        int64         `json:"wal_bytes"`
	Requests   int           `json:"requests"`
	Acked      int           `json:"acked"`
	P50        time.Duration `json:"p50_ns"`
	P90        time.Duration `json:"p90_ns"`
	P99        time.Duration `json:"p99_ns"`
	Max        time.Duration `json:"max_ns"`
	// LateP99 is the p99 of the phase's second half; WorstP99 that of its slowest second,
	// WorstAt into the phase.
	LateP99  time.Duration `json:"late_p99_ns"`
	WorstP99 time.Duration `json:"worst_second_p99_ns"`
	WorstAt  time.Duration `json:"worst_second_at_ns"`
	// ByTen is the p99 of each ten seconds of the phase in turn.
	ByTen []time.Duration `json:"p99_by_ten_seconds_ns,omitempty"`
	// Statuses counts every answer as "kind status" (kind: register, assign, declaration,
	// poll, report; status "error" when none came).
	Statuses  map[string]int `json:"statuses"`
	LastError string         `json:"last_error,omitempty"`
	// Failover is what the failover phase saw; nil for the others.
	Failover *FailoverResult `json:"failover,omitempty"`
	// StatusTook and PageTook time GET /api/v1/status and GET / once, after the phase.
	StatusTook time.Duration `json:"status_ns"`
	PageTook   time.Duration `json:"page_ns"`
	PageBytes  int           `json:"page_bytes"`
	hasProc    bool
}

// ControllerResult is one controller's figures in a phase.
type ControllerResult struct {
	URL string `json:"url"`
	Pid int    `json:"pid,omitempty"`
	// CPU, Cores, RSS and HWM are as PhaseResult's, of this controller alone; 0 when it could
	// not be sampled.
	CPU   time.Duration `json:"cpu_ns"`
	Cores float64       `json:"cores"`
	RSS   int64         `json:"rss_bytes"`
	HWM   int64         `json:"hwm_bytes"`
	// Requests are those it answered (long-polls left out) and Acked the reports it
	// acknowledged with 200.
	Requests int `json:"requests"`
	Acked    int `json:"acked"`
	hasProc  bool
}

// Fleet is a run of simulated hosts against controllers on one database.
type Fleet struct {
	cfg    Config
	client *http.Client
	// admins are the operator's clients of each controller; admin is the first's.
	admins []*Admin
	admin  *Admin
	hosts  []*fleetHost
	rec    atomic.Pointer[Recorder]
	cache  resultCache
	// rev is the module's newest revision, and resources its resources at that revision.
	rev       int64
	resources []hq.Resource
	pollCtx   context.Context
	polls     sync.WaitGroup
}

// fleetHost is a host with what the fleet tracks of it.
type fleetHost struct {
	*Host
	registered int64 // generation at registration
	// sending holds while a report is in flight: like hostd, a host posts one at a time.
	sending sync.Mutex
	// acked is the module revision of the last declaration the host reported on with a 200.
	acked atomic.Int64
}

// NewFleet prepares a run; nothing is sent until Run.
func NewFleet(cfg Config) *Fleet {
	if cfg.Concurrency < 1 {
		cfg.Concurrency = 1
	}
	if cfg.Wait <= 0 {
		cfg.Wait = 30 * time.Second
	}
	if cfg.PhaseTimeout <= 0 {
		cfg.PhaseTimeout = 10 * time.Minute
	}
	// A long-poll and a report per host, and the operator's calls.
	client := &http.Client{Transport: NewTransport(2*cfg.Nodes + cfg.Concurrency + 16)}
	if cfg.Polls < 0 || cfg.Polls > cfg.Nodes {
		cfg.Polls = 0
	}
	f := &Fleet{cfg: cfg, client: client}
	for _, u := range cfg.URLs {
		f.admins = append(f.admins, &Admin{Base: u, Token: cfg.Token, HTTP: client})
	}
	if len(f.admins) == 0 {
		f.admins = []*Admin{{Token: cfg.Token, HTTP: client}}
	}
	f.admin = f.admins[0]
	f.rec.Store(NewRecorder())
	f.cache.m, f.cache.modules = map[string][]byte{}, map[string][]hq.DeclaredModule{}
	return f
}

// observe records a call to the first controller, where the operator's calls go.
func (f *Fleet) observe(kind string, c Call) { f.rec.Load().ObserveAt(0, kind, c) }

// observer records the calls to controller ctl, in the phase's recorder at the time.
func (f *Fleet) observer(ctl int) Observer {
	return func(kind string, c Call) { f.rec.Load().ObserveAt(ctl, kind, c) }
}

// hostObserver records a host's call to the controller it went to, in the phase's recorder at
// the time: a host's list of controllers is the fleet's.
func (f *Fleet) hostObserver(kind string, c Call) { f.rec.Load().ObserveAt(c.Controller, kind, c) }

// bases are the controllers' addresses, in the order of Config.URLs.
func (f *Fleet) bases() []string {
	out := make([]string, len(f.admins))
	for i, a := range f.admins {
		out[i] = a.Base
	}
	return out
}

// controllerOf is the place in Config.URLs of host i's controller.
func (f *Fleet) controllerOf(i int) int { return i % len(f.admins) }

func (f *Fleet) wants(phase string) bool {
	return slices.Contains(f.cfg.Phases, phase)
}

// Run runs the asked phases in order and hands each one's figures to out as it ends. It stops
// at the first phase that cannot complete.
func (f *Fleet) Run(ctx context.Context, out func(PhaseResult)) error {
	defer f.client.CloseIdleConnections()
	pollCtx, stop := context.WithCancel(ctx)
	f.pollCtx = pollCtx
	defer func() { stop(); f.polls.Wait() }()
	later := f.wants(PhaseSteady) || f.wants(PhaseRevision) || f.wants(PhaseOverload) || f.wants(PhaseFailover)
	steps := []struct {
		name string
		need bool
		run  func(context.Context, *PhaseResult) error
	}{
		{PhaseRegister, true, f.register},
		{PhaseAssign, later || f.wants(PhaseAssign) || f.wants(PhaseApply), f.assign},
		{PhaseApply, later || f.wants(PhaseApply), f.apply},
		{PhaseSteady, f.wants(PhaseSteady), func(ctx context.Context, r *PhaseResult) error {
			return f.reportAt(ctx, r, f.cfg.SteadyRate, f.cfg.SteadyFor)
		}},
		{PhaseRevision, f.wants(PhaseRevision), f.revision},
		{PhaseOverload, f.wants(PhaseOverload), func(ctx context.Context, r *PhaseResult) error {
			return f.reportAt(ctx, r, 3*f.cfg.SteadyRate, f.cfg.OverloadFor)
		}},
		{PhaseRecovery, f.wants(PhaseOverload) && f.cfg.RecoverFor > 0, func(ctx context.Context, r *PhaseResult) error {
			return f.reportAt(ctx, r, f.cfg.SteadyRate, f.cfg.RecoverFor)
		}},
		// Last: a controller fewer for whatever would follow.
		{PhaseFailover, f.wants(PhaseFailover), f.failover},
	}
	for _, s := range steps {
		if !s.need {
			continue
		}
		r, err := f.measure(ctx, s.name, s.run)
		out(r)
		if err != nil {
			return fmt.Errorf("%s: %w", s.name, err)
		}
	}
	return nil
}

// measure runs one phase with a recorder of its own and samples the controller around it.
func (f *Fleet) measure(ctx context.Context, name string, run func(context.Context, *PhaseResult) error) (PhaseResult, error) {
	r := PhaseResult{Phase: name}
	// The generator's own collection, marking tens of thousands of goroutines' stacks, stalls
	// its hosts for hundreds of milliseconds; one made due by the last phase's garbage came in
	// the next phase's first seconds. Collected here, the next one comes well into the phase.
	runtime.GC()
	rec := NewRecorder()
	f.rec.Store(rec)
	for _, pid := range f.cfg.Pids {
		if pid > 0 {
			ResetPeak(pid)
		}
	}
	self, _ := ReadProc(os.Getpid())
	before := f.readProcs()
	dbBefore := ProcessesCPU(f.cfg.DBProcess)
	walBefore, walErr := WALPosition(ctx, f.cfg.Postgres)
	start := time.Now()
	err := run(ctx, &r)
	r.Wall = time.Since(start)
	after := f.readProcs()
	r.DBCPU = ProcessesCPU(f.cfg.DBProcess) - dbBefore
	if walAfter, err := WALPosition(ctx, f.cfg.Postgres); err == nil && walErr == nil {
		r.DBWAL = walAfter - walBefore
	}
	if self2, err := ReadProc(os.Getpid()); err == nil {
		r.LoadgenCPU = self2.CPU - self.CPU
	}
	r.Load = LoadAverage()
	s := rec.Snapshot()
	ctls := f.controllerResults(before, after, r.Wall, s.ByController)
	r.hasProc = len(f.cfg.Pids) > 0 && len(ctls) > 0
	for _, c := range ctls {
		r.hasProc = r.hasProc && c.hasProc
		r.CPU, r.RSS, r.HWM = r.CPU+c.CPU, r.RSS+c.RSS, r.HWM+c.HWM
	}
	if !r.hasProc {
		// A sum that leaves a controller out would pass for the whole.
		r.CPU, r.RSS, r.HWM = 0, 0, 0
	} else if r.Wall > 0 {
		r.Cores = r.CPU.Seconds() / r.Wall.Seconds()
	}
	if len(ctls) > 1 {
		r.Controllers = ctls
	}
	if r.Wall > 0 {
		r.Rate = float64(r.Count) / r.Wall.Seconds()
	}
	r.Requests, r.Acked, r.P50, r.P90, r.P99, r.Max, r.Statuses, r.LastError = s.Requests, s.Acked, s.P50, s.P90, s.P99, s.Max, s.Statuses, s.LastError
	r.LateP99, r.WorstP99, r.WorstAt, r.ByTen = s.LateP99, s.WorstP99, s.WorstAt, s.ByTen
	if f.cfg.DB != "" {
		r.DB, r.WAL = FileSize(f.cfg.DB), FileSize(f.cfg.DB+"-wal")
	}
	// The operator's two views, timed once after the phase, outside its recorder.
	f.rec.Store(NewRecorder())
	r.StatusHWM = f.peakOf(func() {
		if c, err := f.admin.Do(ctx, http.MethodGet, "/status", nil, nil); err == nil {
			r.StatusTook = c.Took
		}
	})
	r.PageHWM = f.peakOf(func() { r.PageTook, r.PageBytes = f.timePage(ctx) })
	return r, err
}

// controllerResults gives each controller's figures from its samples before and after the
// phase (nil where it could not be read) and what it answered in it.
func (f *Fleet) controllerResults(before, after []*Proc, wall time.Duration, counts []ControllerCount) []ControllerResult {
	out := make([]ControllerResult, len(f.cfg.URLs))
	for i := range out {
		c := &out[i]
		c.URL = f.cfg.URLs[i]
		if i < len(f.cfg.Pids) {
			c.Pid = f.cfg.Pids[i]
		}
		if i < len(counts) {
			c.Requests, c.Acked = counts[i].Requests, counts[i].Acked
		}
		if before[i] != nil && after[i] != nil {
			c.hasProc = true
			c.CPU, c.RSS, c.HWM = after[i].CPU-before[i].CPU, after[i].RSS, after[i].HWM
			if wall > 0 {
				c.Cores = c.CPU.Seconds() / wall.Seconds()
			}
		}
	}
	return out
}

// cpuBetween is the controllers' CPU from one sample of readProcs to a later one; false when
// either missed a controller, since a sum that leaves one out would pass for the whole.
func cpuBetween(before, after []*Proc) (time.Duration, bool) {
	var cpu time.Duration
	for i := range before {
		if before[i] == nil || after[i] == nil {
			return 0, false
		}
		cpu += after[i].CPU - before[i].CPU
	}
	return cpu, len(before) > 0
}

// readProcs samples every controller, in the order of Config.URLs: nil for one without a pid
// or whose process could not be read.
func (f *Fleet) readProcs() []*Proc {
	out := make([]*Proc, len(f.cfg.URLs))
	for i := range out {
		if i < len(f.cfg.Pids) && f.cfg.Pids[i] > 0 {
			if p, err := ReadProc(f.cfg.Pids[i]); err == nil {
				out[i] = &p
			}
		}
	}
	return out
}

// peakOf runs fn, a call to the first controller, and returns that controller's peak
// resident size while it ran, or 0.
func (f *Fleet) peakOf(fn func()) int64 {
	if len(f.cfg.Pids) == 0 || f.cfg.Pids[0] <= 0 {
		fn()
		return 0
	}
	ResetPeak(f.cfg.Pids[0])
	fn()
	p, err := ReadProc(f.cfg.Pids[0])
	if err != nil {
		return 0
	}
	return p.HWM
}

// timePage fetches the status page with basic auth, as a browser would; 0 when it failed.
func (f *Fleet) timePage(ctx context.Context) (time.Duration, int) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimRight(f.admin.Base, "/")+"/", nil)
	if err != nil {
		return 0, 0
	}
	req.SetBasicAuth("loadgen", f.cfg.Token)
	start := time.Now()
	resp, err := f.client.Do(req)
	if err != nil {
		return 0, 0
	}
	n, _ := drain(resp)
	if resp.StatusCode != http.StatusOK {
		return 0, 0
	}
	return time.Since(start), n
}

// each runs fn for every host, Concurrency at once, until ctx ends; it returns how many
// succeeded and the first error.
func (f *Fleet) each(ctx context.Context, fn func(ctx context.Context, i int) error) (int, error) {
	var (
		next     atomic.Int64
		ok       atomic.Int64
		firstErr error
		once     sync.Once
		wg       sync.WaitGroup
	)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for range min(f.cfg.Concurrency, f.cfg.Nodes) {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= f.cfg.Nodes || ctx.Err() != nil {
					return
				}
				if err := fn(ctx, i); err != nil {
					once.Do(func() { firstErr = err; cancel() })
					return
				}
				ok.Add(1)
			}
		})
	}
	wg.Wait()
	return int(ok.Load()), firstErr
}

func (f *Fleet) register(ctx context.Context, r *PhaseResult) error {
	ctx, cancel := context.WithTimeout(ctx, f.cfg.PhaseTimeout)
	defer cancel()
	f.hosts = make([]*fleetHost, f.cfg.Nodes)
	n, err := f.each(ctx, func(ctx context.Context, i int) error {
		name := fmt.Sprintf("%s%05d", f.cfg.Prefix, i)
		ctl := f.controllerOf(i)
		token, gen, c, err := f.admins[ctl].Register(ctx, name)
		obs := f.observer(ctl)
		obs("register", c)
		if err != nil {
			return err
		}
		f.hosts[i] = &fleetHost{Host: NewHostOf(f.bases(), ctl, name, token, f.client, f.hostObserver), registered: gen}
		return nil
	})
	r.Count, r.Unit = n, "nodes/s"
	return err
}

// moduleResources is the module at content version v: Resources files under /etc, of which
// only the first one's content depends on v.
func moduleResources(n int, module string, v int) []hq.Resource {
	rs := make([]hq.Resource, n)
	for i := range rs {
		content := "loadgen 1\n"
		if i == 0 {
			content = fmt.Sprintf("loadgen %d\n", v)
		}
		rs[i] = hq.Resource{Name: fmt.Sprintf("f%04d", i), Kind: hq.KindFile,
			Path: fmt.Sprintf("/etc/%s/f%04d.conf", module, i), Content: content, Mode: "0644"}
	}
	return rs
}

func (f *Fleet) assign(ctx context.Context, r *PhaseResult) error {
	ctx, cancel := context.WithTimeout(ctx, f.cfg.PhaseTimeout)
	defer cancel()
	f.resources = moduleResources(f.cfg.Resources, f.cfg.Module, 1)
	var put struct {
		Revision int64 `json:"revision"`
	}
	c, err := f.admin.Do(ctx, http.MethodPut, "/modules/"+f.cfg.Module, map[string][]hq.Resource{"resources": f.resources}, &put)
	f.observe("module", c)
	r.Put = c.Took
	if err != nil {
		return err
	}
	f.rev = put.Revision
	n, err := f.each(ctx, func(ctx context.Context, i int) error {
		_, c, err := f.admin.Assign(ctx, f.hosts[i].Name, f.cfg.Module)
		f.observe("assign", c)
		return err
	})
	r.Count, r.Unit = n, "nodes/s"
	return err
}

// retry is how the fleet's hosts retry, as hostd does: a second after no answer, and as long
// as the controller asks after a 503.
var retry = Retry{Unreachable: time.Second, Shed: time.Second}

// apply has every host fetch its first declaration and report it applied, every resource
// changed.
func (f *Fleet) apply(ctx context.Context, r *PhaseResult) error {
	ctx, cancel := context.WithTimeout(ctx, f.cfg.PhaseTimeout)
	defer cancel()
	n, err := f.each(ctx, func(ctx context.Context, i int) error {
		h := f.hosts[i]
		d, c := h.Declaration(ctx, h.registered, 0)
		if d == nil {
			return fmt.Errorf("%s: no declaration after generation %d: %d %v", h.Name, h.registered, c.Status, c.Err)
		}
		if err := f.send(ctx, h, nil, d); err != nil {
			return err
		}
		// As a host does, it long-polls as soon as it has applied: the fleet's polls arrive
		// spread over the phase, not all at its end.
		f.startPoll(i)
		return nil
	})
	r.Count, r.Unit = n, "nodes/s"
	return err
}

// send reports declaration d applied, having come from prev (nil: nothing applied before), and
// makes d the host's current declaration once the controller acknowledged it.
func (f *Fleet) send(ctx context.Context, h *fleetHost, prev, d *hq.Declaration) error {
	// Shared before the report, which may wait out many a 503: a fleet told to come back
	// later would otherwise hold a decoded copy of the declaration on every host meanwhile.
	d = f.cache.share(d)
	h.sending.Lock()
	defer h.sending.Unlock()
	now := time.Now().UTC()
	_, c, _ := h.Report(ctx, ReportBody(d, f.cache.results(prev, d), now, now), retry)
	if c.Err != nil || c.Status != http.StatusOK {
		return fmt.Errorf("%s: report of generation %d: %d %v", h.Name, d.Generation, c.Status, c.Err)
	}
	h.SetCurrent(d)
	if len(d.Modules) > 0 {
		h.acked.Store(d.Modules[0].Revision)
	}
	return nil
}

// startPoll has host i, if it is one of the pollers, hold a long-poll for a newer
// declaration from now on, and report on each one it receives, until the run ends.
func (f *Fleet) startPoll(i int) {
	if i < len(f.pollers()) {
		h := f.hosts[i]
		f.polls.Go(func() { f.poll(f.pollCtx, h) })
	}
}

// pollers are the hosts that hold a long-poll.
func (f *Fleet) pollers() []*fleetHost {
	if f.cfg.Polls > 0 && f.cfg.Polls < len(f.hosts) {
		return f.hosts[:f.cfg.Polls]
	}
	return f.hosts
}

func (f *Fleet) poll(ctx context.Context, h *fleetHost) {
	for ctx.Err() == nil {
		cur := h.Current()
		d, c := h.Declaration(ctx, cur.Generation, f.cfg.Wait)
		var pause time.Duration
		switch {
		case d != nil:
			if err := f.send(ctx, h, cur, d); err != nil {
				pause = time.Second
			}
		case c.Status == http.StatusNotModified:
		case c.Status == http.StatusServiceUnavailable:
			pause = max(c.RetryAfter, time.Second)
		default:
			pause = time.Second
		}
		if pause > 0 {
			select {
			case <-ctx.Done():
			case <-time.After(pause):
			}
		}
	}
}

// revision uploads a new revision that changes one resource and waits until every host has
// reported the new generation.
func (f *Fleet) revision(ctx context.Context, r *PhaseResult) error {
	ctx, cancel := context.WithTimeout(ctx, f.cfg.PhaseTimeout)
	defer cancel()
	f.resources = moduleResources(f.cfg.Resources, f.cfg.Module, int(f.rev)+1)
	var put struct {
		Revision int64 `json:"revision"`
	}
	start := time.Now()
	c, err := f.admin.Do(ctx, http.MethodPut, "/modules/"+f.cfg.Module, map[string][]hq.Resource{"resources": f.resources}, &put)
	f.observe("module", c)
	r.Put, r.Unit = c.Took, "nodes/s"
	if err != nil {
		return err
	}
	f.rev = put.Revision
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	hosts := f.pollers()
	for {
		n := 0
		for _, h := range hosts {
			if h.acked.Load() >= f.rev {
				n++
			}
		}
		r.Count = n
		if n == len(hosts) {
			r.Converged = time.Since(start)
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%d of %d node(s) reported revision %d: %w", n, len(hosts), f.rev, ctx.Err())
		case <-tick.C:
		}
	}
}

// reportAt has the fleet report "nothing changed" at rate reports/s for d: each host every
// Nodes/rate seconds from a random start, one report at a time, retrying a 503 as the
// controller asks. Reports due once d has passed are not sent; those in flight are waited for.
func (f *Fleet) reportAt(ctx context.Context, r *PhaseResult, rate float64, d time.Duration) error {
	r.Unit = "reports/s"
	if rate <= 0 || d <= 0 {
		return nil
	}
	period := max(time.Duration(float64(len(f.hosts))/rate*float64(time.Second)), time.Microsecond)
	start := time.Now()
	end := start.Add(d)
	// A report still retrying well after the phase is given up.
	ctx, cancel := context.WithDeadline(ctx, end.Add(30*time.Second))
	defer cancel()
	var offered, late, acked, byEnd atomic.Int64
	// The controllers sampled at the midpoint, for the second half's CPU.
	var mid []*Proc
	var midAcked int64
	sampled := make(chan struct{})
	midpoint := time.AfterFunc(d/2, func() {
		defer close(sampled)
		mid, midAcked = f.readProcs(), acked.Load()
	})
	var wg sync.WaitGroup
	for _, h := range f.hosts {
		wg.Go(func() {
			next := start.Add(time.Duration(rand.Int64N(int64(period))))
			for next.Before(end) {
				if wait := time.Until(next); wait > 0 {
					select {
					case <-ctx.Done():
						return
					case <-time.After(wait):
					}
				}
				offered.Add(1)
				cur := h.Current()
				if err := f.send(ctx, h, cur, cur); err == nil {
					acked.Add(1)
					if time.Now().Before(end) {
						byEnd.Add(1)
					}
				}
				next = next.Add(period)
				if now := time.Now(); next.Before(now) {
					late.Add(1)
					next = now
				}
			}
		})
	}
	wg.Wait()
	if !midpoint.Stop() {
		<-sampled
		if cpu, ok := cpuBetween(mid, f.readProcs()); ok {
			r.LateCPU, r.LateReports = cpu, int(acked.Load()-midAcked)
		}
	}
	r.Count, r.Offered, r.Late, r.AckedByEnd = int(acked.Load()), int(offered.Load()), int(late.Load()), int(byEnd.Load())
	r.Target = int(rate * d.Seconds())
	return nil
}

// resultCache holds the results of each pair of declarations the fleet reports on, encoded
// once: every host of the fleet declares the same resources. It also holds those resources
// once, for every host to keep.
type resultCache struct {
	mu      sync.Mutex
	m       map[string][]byte
	modules map[string][]hq.DeclaredModule
}

// share returns d with the modules of the first declaration of the same module revisions that
// the fleet kept: its hosts have no vars of their own, so the same revisions declare the same
// resources on every one of them. Each host keeps the declaration it applied, and 10,000
// copies of 500 decoded resources are gigabytes: a generator whose collector marks them in the
// middle of a phase delays its own requests, and the delay is counted as the controller's
// latency.
func (c *resultCache) share(d *hq.Declaration) *hq.Declaration {
	key := modulesKey(d)
	c.mu.Lock()
	defer c.mu.Unlock()
	kept, ok := c.modules[key]
	if !ok {
		c.modules[key] = d.Modules
		return d
	}
	shared := *d
	shared.Modules = kept
	return &shared
}

// results encodes the results of applying d coming from prev: a resource is changed when prev
// did not declare it the same way.
func (c *resultCache) results(prev, d *hq.Declaration) []byte {
	key := modulesKey(prev) + ">" + modulesKey(d)
	c.mu.Lock()
	defer c.mu.Unlock()
	if b, ok := c.m[key]; ok {
		return b
	}
	before := map[string]string{}
	if prev != nil {
		for _, m := range prev.Modules {
			for _, r := range m.Resources {
				before[hq.Ref(m.Name, r.Name)] = r.Digest()
			}
		}
	}
	b := Results(d, func(module string, r hq.Resource) bool { return before[hq.Ref(module, r.Name)] != r.Digest() })
	c.m[key] = b
	return b
}

// modulesKey names what a declaration declares by its modules' revisions and taken flags,
// which is the same on every node of the fleet.
func modulesKey(d *hq.Declaration) string {
	if d == nil {
		return "-"
	}
	var b strings.Builder
	for _, m := range d.Modules {
		fmt.Fprintf(&b, "%s@%d:%t,", m.Name, m.Revision, m.Taken)
	}
	return b.String()
}

// drain reads and closes an answer's body, so its connection is kept, and returns its size.
func drain(resp *http.Response) (int, error) {
	defer resp.Body.Close()
	n, err := io.Copy(io.Discard, resp.Body)
	return int(n), err
}
