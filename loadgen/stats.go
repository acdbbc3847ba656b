package loadgen

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Recorder collects the requests of one phase: their latencies and their answers by status.
// Long-polls are counted by status but their latencies are left out: they last as long as
// they are asked to wait.
type Recorder struct {
	mu    sync.Mutex
	start time.Time
	took  []time.Duration
	// done is when each request of took ended, from start: a phase's tail is told apart from
	// a moment of it.
	done      []time.Duration
	statuses  map[string]int
	acked     int
	attempts  int
	lastError string
	// byController counts each controller's requests and acknowledged reports, by its place
	// in the fleet's list: whether the hosts were split as meant.
	byController []ControllerCount
}

// ControllerCount is what one controller of a fleet answered in a phase: its requests (polls
// left out, as in Requests) and the reports it acknowledged.
type ControllerCount struct {
	Requests int
	Acked    int
}

// NewRecorder returns an empty recorder.
func NewRecorder() *Recorder { return &Recorder{start: time.Now(), statuses: map[string]int{}} }

// Observe records one request; it is an Observer.
func (r *Recorder) Observe(kind string, c Call) { r.ObserveAt(0, kind, c) }

// ObserveAt records one request that controller ctl (its place in the fleet's list) answered.
func (r *Recorder) ObserveAt(ctl int, kind string, c Call) {
	key := strconv.Itoa(c.Status)
	if c.Err != nil && c.Status == 0 {
		key = "error"
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.statuses[kind+" "+key]++
	if len(r.byController) <= ctl {
		r.byController = append(r.byController, make([]ControllerCount, ctl+1-len(r.byController))...)
	}
	if kind != "poll" {
		r.took = append(r.took, c.Took)
		r.done = append(r.done, time.Since(r.start))
		r.attempts++
		r.byController[ctl].Requests++
	}
	if kind == "report" && c.Status == 200 && c.Err == nil {
		r.acked++
		r.byController[ctl].Acked++
	}
	if c.Err != nil {
		r.lastError = c.Err.Error()
	}
}

// Snapshot is what a recorder holds at one moment.
type Snapshot struct {
	Requests int
	Acked    int
	P50      time.Duration
	P90      time.Duration
	P99      time.Duration
	Max      time.Duration
	// LateP99 is the p99 of the requests that ended in the second half of the phase, and
	// WorstP99 that of the second whose requests' p99 was highest, which began WorstAt after
	// the phase did: whether a tail is the whole phase's or one moment's.
	LateP99  time.Duration
	WorstP99 time.Duration
	WorstAt  time.Duration
	// ByTen is the p99 of each ten seconds of the phase in turn, by when requests ended: where
	// in the phase a tail lies.
	ByTen     []time.Duration
	Statuses  map[string]int
	LastError string
	// ByController is each controller's share, by its place in the fleet's list; it is as
	// long as the highest place that answered anything.
	ByController []ControllerCount
}

// Snapshot summarises the requests recorded so far.
func (r *Recorder) Snapshot() Snapshot {
	r.mu.Lock()
	took, done := slices.Clone(r.took), slices.Clone(r.done)
	s := Snapshot{Requests: r.attempts, Acked: r.acked, Statuses: make(map[string]int, len(r.statuses)), LastError: r.lastError,
		ByController: slices.Clone(r.byController)}
	for k, v := range r.statuses {
		s.Statuses[k] = v
	}
	r.mu.Unlock()
	s.LateP99, s.WorstP99, s.WorstAt = tails(took, done)
	s.ByTen = windows(took, done, 10*time.Second)
	slices.Sort(took)
	s.P50, s.P90, s.P99 = quantile(took, 0.50), quantile(took, 0.90), quantile(took, 0.99)
	if len(took) > 0 {
		s.Max = took[len(took)-1]
	}
	return s
}

// tails returns the p99 of the requests that ended in the second half of the span they
// cover, and the highest p99 of any one second, with when that second began.
func tails(took, done []time.Duration) (late, worst, at time.Duration) {
	if len(done) == 0 {
		return 0, 0, 0
	}
	half := slices.Max(done) / 2
	var lateTook []time.Duration
	seconds := map[time.Duration][]time.Duration{}
	for i, d := range done {
		if d >= half {
			lateTook = append(lateTook, took[i])
		}
		sec := d.Truncate(time.Second)
		seconds[sec] = append(seconds[sec], took[i])
	}
	slices.Sort(lateTook)
	late = quantile(lateTook, 0.99)
	for sec, ts := range seconds {
		slices.Sort(ts)
		if p := quantile(ts, 0.99); p > worst || p == worst && sec < at {
			worst, at = p, sec
		}
	}
	return late, worst, at
}

// windows returns the p99 of the requests that ended in each span of width in turn, from the
// first; a span in which none ended has 0.
func windows(took, done []time.Duration, width time.Duration) []time.Duration {
	if len(done) == 0 {
		return nil
	}
	spans := make([][]time.Duration, slices.Max(done)/width+1)
	for i, d := range done {
		spans[d/width] = append(spans[d/width], took[i])
	}
	p99 := make([]time.Duration, len(spans))
	for i, ts := range spans {
		slices.Sort(ts)
		p99[i] = quantile(ts, 0.99)
	}
	return p99
}

// quantile returns the q-quantile of sorted by the nearest-rank method.
func quantile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(float64(len(sorted))*q+0.999999) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

// NonOK lists the answers that were not 2xx or 304, as "kind status=count", sorted.
func (s Snapshot) NonOK() []string {
	var out []string
	for k, n := range s.Statuses {
		_, status, _ := strings.Cut(k, " ")
		if status == "200" || status == "201" || status == "304" {
			continue
		}
		out = append(out, fmt.Sprintf("%s=%d", k, n))
	}
	slices.Sort(out)
	return out
}

// Proc is a sample of a process's CPU time and memory, read from /proc.
type Proc struct {
	CPU time.Duration // user + system
	RSS int64         // bytes resident now
	HWM int64         // bytes resident at the peak so far
}

// clockTick is USER_HZ, the unit of /proc/<pid>/stat's times; it is 100 on every Linux ABI Go
// supports.
const clockTick = 100

// ReadProc samples process pid.
func ReadProc(pid int) (Proc, error) {
	var p Proc
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return p, err
	}
	// The command name is in parentheses and may hold spaces; the fields after it are fixed:
	// utime and stime are fields 14 and 15 of the whole line, 12 and 13 after the name.
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return p, fmt.Errorf("/proc/%d/stat: no command name", pid)
	}
	f := strings.Fields(string(stat[i+1:]))
	if len(f) < 13 {
		return p, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(f))
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return p, fmt.Errorf("/proc/%d/stat: utime %q stime %q", pid, f[11], f[12])
	}
	p.CPU = time.Duration(utime+stime) * time.Second / clockTick
	status, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return p, err
	}
	defer status.Close()
	sc := bufio.NewScanner(status)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		var dst *int64
		switch k {
		case "VmRSS":
			dst = &p.RSS
		case "VmHWM":
			dst = &p.HWM
		default:
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		if err == nil {
			*dst = kb << 10
		}
	}
	return p, sc.Err()
}

// ProcessesCPU is the user+system time of every process named comm (as /proc/PID/stat names
// it), 0 for "". Processes that ended since the last call are no longer counted, so it is for
// servers whose processes live as long as their connections (PostgreSQL's backends behind a
// pool).
func ProcessesCPU(comm string) time.Duration {
	if comm == "" {
		return 0
	}
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	var total time.Duration
	for _, path := range stats {
		b, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		open, close := bytes.IndexByte(b, '('), bytes.LastIndexByte(b, ')')
		if open < 0 || close < open || string(b[open+1:close]) != comm {
			continue
		}
		f := strings.Fields(string(b[close+1:]))
		if len(f) < 13 {
			continue
		}
		utime, err1 := strconv.ParseInt(f[11], 10, 64)
		stime, err2 := strconv.ParseInt(f[12], 10, 64)
		if err1 == nil && err2 == nil {
			total += time.Duration(utime+stime) * time.Second / clockTick
		}
	}
	return total
}

// ResetPeak restarts the process's peak resident size (VmHWM) from its current size, so that
// the next sample's peak is of what happened since. It needs the right to write the
// process's clear_refs (its owner or root); without it the peak stays the lifetime's.
func ResetPeak(pid int) error {
	return os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("5"), 0)
}

// LoadAverage is the machine's one-minute load average, or -1 when it cannot be read.
func LoadAverage() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return -1
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return -1
	}
	v, err := strconv.ParseFloat(f[0], 64)
	if err != nil {
		return -1
	}
	return v
}

// DBPathOf finds the database of a running hq serve from its environment (HQ_DB, relative to
// its working directory; ./hq.db when unset), or "" when it cannot be read.
func DBPathOf(pid int) string {
	env, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
	if err != nil {
		return ""
	}
	path := "hq.db"
	for _, kv := range bytes.Split(env, []byte{0}) {
		if v, ok := bytes.CutPrefix(kv, []byte("HQ_DB=")); ok {
			path = string(v)
		}
	}
	if !filepath.IsAbs(path) {
		cwd, err := os.Readlink(fmt.Sprintf("/proc/%d/cwd", pid))
		if err != nil {
			return ""
		}
		path = filepath.Join(cwd, path)
	}
	return path
}

// FileSize is the size of a file, 0 when it is not there.
func FileSize(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.Size()
}
