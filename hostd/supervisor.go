package hostd

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/meshhq/hq"
)

// servicesFile is where the supervisor keeps what it runs, in the state dir.
const servicesFile = "services.json"

// watchInterval is how often the supervisor looks whether the services it runs still do.
const watchInterval = time.Second

// supervisor runs each declared service in its own session (so its own process group, which
// stopping it signals as a whole), writing to a log file in the state dir, never through a
// pipe into hostd: a service outlives the hostd that started it. What it runs is recorded in
// services.json, so that the next hostd re-adopts every service still running as it was
// started instead of starting it again. A service hostd started is its child and reaped when
// it exits; an adopted one is not, and is watched through /proc by its pid and start time.
// Either is looked at on every reconcile and every watchInterval by a goroutine Close stops.
type supervisor struct {
	stateDir    string
	root        string
	stopTimeout time.Duration
	log         *slog.Logger
	// boot is the kernel's boot id: start times count from boot, so a record from another
	// boot names no process that runs now.
	boot string

	mu    sync.Mutex
	procs map[string]*proc
	// known holds every service this hostd started, and every one the previous hostd left a
	// record of: one of those found dead died behind hostd's back.
	known map[string]bool

	stopWatch context.CancelFunc
	watching  sync.WaitGroup
}

// proc is one running (or exited) service process.
type proc struct {
	ref  string
	spec string
	// decl is the service as declared when it was started.
	decl hq.Resource
	pid  int
	// start is the process's start time, in clock ticks since boot: with pid, it names the
	// process and no other that reuses the pid.
	start uint64
	// child is set when this hostd started the process: it reaps it with wait4.
	child bool
	// done is closed once the supervisor has seen the process gone; exit then says how it
	// ended. Both are guarded by the supervisor's mu.
	done    chan struct{}
	exit    string
	healthy bool
	// secretEnv are the secret values of its environment, in memory only: never in
	// services.json, so a process adopted after a restart has none.
	secretEnv map[string]string
	// stopping is set when hostd itself stops the process, so its exit is not news.
	stopping bool
}

// serviceRecord is what services.json keeps of one service, by ref. Pid and Start (the start
// time in clock ticks since boot, field 22 of /proc/<pid>/stat) tell the process hostd started
// from another that reuses its pid, and Boot (/proc/sys/kernel/random/boot_id) the boot they
// count from. Spec is the digest of the spec it runs and Resource that spec, so a service is
// re-adopted only when its spec is unchanged, and its health check and a rollback to it keep
// working; Healthy is whether it passed its health check. A file written before services were
// re-adopted holds only pid and start: such a service is restarted, as one whose spec changed.
type serviceRecord struct {
	Pid      int          `json:"pid"`
	Start    uint64       `json:"start"`
	Boot     string       `json:"boot,omitempty"`
	Spec     string       `json:"spec,omitempty"`
	Resource *hq.Resource `json:"resource,omitempty"`
	Healthy  bool         `json:"healthy,omitempty"`
}

func newSupervisor(stateDir, root string, stopTimeout time.Duration, log *slog.Logger) *supervisor {
	return &supervisor{stateDir: stateDir, root: root, stopTimeout: stopTimeout, log: log, boot: bootID(),
		procs: map[string]*proc{}, known: map[string]bool{}}
}

// bootID returns the kernel's id of this boot, or "" when it cannot be read.
func bootID() string {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// watch looks at every service every interval until close stops it.
func (s *supervisor) watch(interval time.Duration) {
	ctx, cancel := context.WithCancel(context.Background())
	s.stopWatch = cancel
	s.watching.Go(func() {
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			for _, p := range s.all() {
				s.running(p)
			}
		}
	})
}

// close stops the watch and, when stopServices is set, every service; otherwise the services
// keep running for the next hostd to re-adopt. It may be called more than once.
func (s *supervisor) close(stopServices bool) {
	if s.stopWatch != nil {
		s.stopWatch()
		s.watching.Wait()
	}
	if stopServices {
		s.stopAll()
	}
}

func (s *supervisor) get(ref string) *proc {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.procs[ref]
}

func (s *supervisor) all() []*proc {
	s.mu.Lock()
	defer s.mu.Unlock()
	ps := make([]*proc, 0, len(s.procs))
	for _, p := range s.procs {
		ps = append(ps, p)
	}
	return ps
}

// refs lists the services supervised now, running or exited.
func (s *supervisor) refs() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	refs := make([]string, 0, len(s.procs))
	for ref := range s.procs {
		refs = append(refs, ref)
	}
	return refs
}

// ran reports whether ref ran under hostd: this one started it, or the previous one left a
// record of it.
func (s *supervisor) ran(ref string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.known[ref]
}

func (s *supervisor) healthy(p *proc) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return p.healthy
}

// running reports whether p still runs. When it finds p gone it says so once, closes p.done
// and keeps how it ended in p.exit.
func (s *supervisor) running(p *proc) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	select {
	case <-p.done:
		return false
	default:
	}
	exit, gone := gone(p)
	if !gone {
		return true
	}
	p.exit = exit
	close(p.done)
	if !p.stopping {
		s.log.Warn("service exited", "resource", p.ref, "pid", p.pid, "err", exit, "log", s.logPath(p.ref))
	}
	return false
}

// gone reports whether p's process has ended, and how.
func gone(p *proc) (string, bool) {
	if p.child {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(p.pid, &ws, syscall.WNOHANG, nil)
		switch {
		case pid == p.pid:
			return waitText(ws), true
		case err == nil || errors.Is(err, syscall.EINTR):
			return "", false
		}
		// ECHILD: no longer this process's child to reap; /proc says the rest.
	}
	if !sameProcess(p.pid, p.start) {
		return "exited; how is unknown, as it was re-adopted and is not hostd's child", true
	}
	return "", false
}

// sameProcess reports whether pid still runs and is the process that started at start (a
// zombie has ended: it only waits for its parent to reap it, which this does when it can).
func sameProcess(pid int, start uint64) bool {
	if pid <= 1 {
		return false
	}
	f, err := procStatFields(pid)
	if err != nil || len(f) < 20 {
		return false
	}
	if got, err := strconv.ParseUint(f[19], 10, 64); err != nil || got != start {
		return false
	}
	if f[0] == "Z" {
		// Started by an earlier engine in this same process: it is ours to reap.
		syscall.Wait4(pid, nil, syscall.WNOHANG, nil)
		return false
	}
	return true
}

// waitText says how a process ended, as os/exec does.
func waitText(ws syscall.WaitStatus) string {
	switch {
	case ws.Exited():
		return "exit status " + strconv.Itoa(ws.ExitStatus())
	case ws.Signaled():
		return "signal: " + ws.Signal().String()
	}
	return fmt.Sprintf("wait status %#x", uint32(ws))
}

// logPath is where a service's stdout and stderr go.
func (s *supervisor) logPath(ref string) string {
	module, name, _ := strings.Cut(ref, "/")
	return filepath.Join(s.stateDir, "services", module, name+".log")
}

// start stops ref's process if one runs and starts decl in its place.
func (s *supervisor) start(ref string, decl hq.Resource, spec string, l launch) (*proc, error) {
	s.stop(ref)
	if len(l.args) == 0 {
		return nil, fmt.Errorf("%s declares no command", ref)
	}
	logPath := s.logPath(ref)
	if err := os.MkdirAll(filepath.Dir(logPath), 0o700); err != nil {
		return nil, err
	}
	logf, err := os.OpenFile(logPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	// The service writes to the file itself: once started it needs nothing of hostd.
	defer logf.Close()
	fmt.Fprintf(logf, "%s%s at %s\n", startMark, ref, time.Now().UTC().Format(time.RFC3339))
	cmd := exec.Command(l.args[0], l.args[1:]...)
	cmd.Dir = s.root
	env := make(map[string]string, len(l.env)+len(l.secret))
	maps.Copy(env, l.env)
	maps.Copy(env, l.secret)
	cmd.Env = commandEnv(env)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &proc{ref: ref, spec: spec, decl: decl, pid: cmd.Process.Pid, child: true, done: make(chan struct{}), secretEnv: l.secret}
	// Reaped with wait4 (see gone), never with cmd.Wait, which would need a goroutine that
	// cannot be stopped while the service runs.
	cmd.Process.Release()
	// Until reaped the process's /proc entry stays, so its start time can be read even if it
	// exited at once.
	if st, err := procStart(p.pid); err == nil {
		p.start = st
	}
	s.mu.Lock()
	s.procs[ref] = p
	s.known[ref] = true
	s.mu.Unlock()
	s.save()
	s.log.Info("service started", "resource", ref, "pid", p.pid)
	return p, nil
}

// stop ends ref's process group: SIGTERM, then SIGKILL after the stop timeout.
func (s *supervisor) stop(ref string) {
	s.mu.Lock()
	p := s.procs[ref]
	if p == nil {
		s.mu.Unlock()
		return
	}
	p.stopping = true
	delete(s.procs, ref)
	s.mu.Unlock()
	s.terminate(p)
	s.save()
	s.log.Info("service stopped", "resource", ref, "pid", p.pid)
}

func (s *supervisor) terminate(p *proc) {
	// The group is signalled even once its leader has exited, as what it started may still
	// run: the kernel gives no new process a pid that is the id of a group with members. But
	// an adopted process that was gone before hostd came to stop it may have left long ago,
	// and its pid be someone else's now: that group is left alone.
	group := p.child || s.running(p)
	signal := func(sig syscall.Signal) {
		if group {
			syscall.Kill(-p.pid, sig)
		}
	}
	signal(syscall.SIGTERM)
	if !s.waitGone(p, s.stopTimeout) {
		signal(syscall.SIGKILL)
		if !s.waitGone(p, s.stopTimeout) {
			s.log.Error("a service survived SIGKILL", "resource", p.ref, "pid", p.pid)
			return
		}
	}
	// Whatever of the group is left after the leader is killed too.
	signal(syscall.SIGKILL)
}

// waitGone waits up to timeout for p to end, and reports whether it did.
func (s *supervisor) waitGone(p *proc, timeout time.Duration) bool {
	deadline := time.Now().Add(timeout)
	for s.running(p) {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
	return true
}

// stopAll stops every service at once, so a shutdown waits one stop timeout, not one per service.
func (s *supervisor) stopAll() {
	var wg sync.WaitGroup
	for _, ref := range s.refs() {
		wg.Go(func() { s.stop(ref) })
	}
	wg.Wait()
}

// save writes services.json from what runs now.
func (s *supervisor) save() {
	s.mu.Lock()
	recs := make(map[string]serviceRecord, len(s.procs))
	for ref, p := range s.procs {
		decl := p.decl
		recs[ref] = serviceRecord{Pid: p.pid, Start: p.start, Boot: s.boot, Spec: p.spec, Resource: &decl, Healthy: p.healthy}
	}
	s.mu.Unlock()
	if err := writeJSONAtomic(filepath.Join(s.stateDir, servicesFile), recs); err != nil {
		s.log.Error("saving the services hostd runs", "err", err)
	}
}

// adopt takes over the services a previous hostd recorded and left running: the process must
// be the one it started (same pid, same start time, same boot). What it recorded that no
// longer runs died while no hostd watched it; the next reconcile starts it again, and says so
// as drift, as for any service that died. After a reboot nothing runs yet, and nothing died
// behind hostd's back: every service starts as new.
func (s *supervisor) adopt() {
	var recs map[string]serviceRecord
	if _, err := readJSON(filepath.Join(s.stateDir, servicesFile), &recs); err != nil {
		s.log.Warn("reading the services a previous hostd ran", "err", err)
		return
	}
	s.mu.Lock()
	for ref, r := range recs {
		if r.Boot != "" && r.Boot != s.boot {
			continue
		}
		s.known[ref] = true
		if !sameProcess(r.Pid, r.Start) {
			s.log.Info("a service the previous hostd ran is gone; it starts again when it is next applied", "resource", ref, "pid", r.Pid)
			continue
		}
		p := &proc{ref: ref, spec: r.Spec, pid: r.Pid, start: r.Start, healthy: r.Healthy, done: make(chan struct{})}
		if r.Resource != nil {
			p.decl = *r.Resource
		}
		s.procs[ref] = p
		s.log.Info("re-adopted a running service", "resource", ref, "pid", r.Pid)
	}
	// Rewritten only when a record is dropped: a start that adopts all of them (or finds
	// none) has nothing to change, and a one-shot hostd apply should not pay two fsyncs for it.
	same := len(s.procs) == len(recs)
	s.mu.Unlock()
	if !same {
		s.save()
	}
}

// procStart reads a process's start time from /proc/<pid>/stat (field 22).
func procStart(pid int) (uint64, error) {
	f, err := procStatFields(pid)
	if err != nil {
		return 0, err
	}
	if len(f) < 20 {
		return 0, errors.New("short /proc stat")
	}
	return strconv.ParseUint(f[19], 10, 64)
}

// procStatFields returns the fields of /proc/<pid>/stat after the command name, which may hold
// spaces and so ends at the last ')'. Field 3 (state) is the first returned.
func procStatFields(pid int) ([]string, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return nil, err
	}
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return nil, errors.New("malformed /proc stat")
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) == 0 {
		return nil, errors.New("malformed /proc stat")
	}
	return f, nil
}

// startMark begins the line hostd writes to a service's log before each start.
const startMark = "--- hostd: starting "

// lastRun is the end of what the last run of a service wrote to its log at path: what follows
// the last start line within the log's last maxCaptured bytes, or nil when it cannot be read.
func lastRun(path string) []byte {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil
	}
	from := max(fi.Size()-maxCaptured, 0)
	b := make([]byte, fi.Size()-from)
	n, _ := f.ReadAt(b, from)
	b = b[:n]
	if i := bytes.LastIndex(b, []byte(startMark)); i >= 0 && (i == 0 || b[i-1] == '\n') {
		b = b[i:]
		if nl := bytes.IndexByte(b, '\n'); nl >= 0 {
			b = b[nl+1:]
		} else {
			b = nil
		}
	}
	return b
}
