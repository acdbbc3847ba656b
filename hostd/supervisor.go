package hostd

import (
	"errors"
	"fmt"
	"log/slog"
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

const pidsFile = "services.json"

// supervisor runs each declared service as a child in its own process group, so stopping it
// reaches everything it started. The pids are written to the state dir so that a hostd that
// died without stopping them can kill them on its next start.
type supervisor struct {
	stateDir    string
	root        string
	stopTimeout time.Duration
	log         *slog.Logger

	mu      sync.Mutex
	procs   map[string]*proc
	started map[string]bool
}

// proc is one running (or exited) service process.
type proc struct {
	ref  string
	spec string
	res  hq.Resource
	pid  int
	done chan struct{}
	// exit is the Wait error; read only after done is closed.
	exit    error
	healthy bool
	// stopping is set when hostd itself stops the process, so its exit is not news.
	stopping bool
}

// pidRecord identifies a process across restarts of hostd: the start time (in clock ticks
// since boot) tells a reused pid from the process hostd started.
type pidRecord struct {
	Pid   int    `json:"pid"`
	Start uint64 `json:"start"`
}

func newSupervisor(stateDir, root string, stopTimeout time.Duration, log *slog.Logger) *supervisor {
	return &supervisor{stateDir: stateDir, root: root, stopTimeout: stopTimeout, log: log,
		procs: map[string]*proc{}, started: map[string]bool{}}
}

func (p *proc) alive() bool {
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

func (s *supervisor) get(ref string) *proc {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.procs[ref]
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

func (s *supervisor) everStarted(ref string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.started[ref]
}

func (s *supervisor) healthy(p *proc) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return p.healthy
}

// logPath is where a service's stdout and stderr go.
func (s *supervisor) logPath(ref string) string {
	module, name, _ := strings.Cut(ref, "/")
	return filepath.Join(s.stateDir, "services", module, name+".log")
}

// start stops ref's process if one runs and starts res in its place.
func (s *supervisor) start(ref string, res hq.Resource, spec string, l launch) (*proc, error) {
	s.stop(ref)
	logPath := s.logPath(ref)
	if err := os.MkdirAll(filepath.Dir(logPath), 0o700); err != nil {
		return nil, err
	}
	logf, err := os.OpenFile(logPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(logf, "--- hostd: starting %s at %s\n", ref, time.Now().UTC().Format(time.RFC3339))
	cmd := exec.Command(l.args[0], l.args[1:]...)
	cmd.Dir = s.root
	cmd.Env = commandEnv(l.env)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, err
	}
	p := &proc{ref: ref, spec: spec, res: res, pid: cmd.Process.Pid, done: make(chan struct{})}
	go func() {
		err := cmd.Wait()
		logf.Close()
		s.mu.Lock()
		p.exit = err
		stopping := p.stopping
		s.mu.Unlock()
		close(p.done)
		if !stopping {
			s.log.Warn("service exited", "resource", ref, "pid", p.pid, "err", exitText(err), "log", logPath)
		}
	}()
	s.mu.Lock()
	s.procs[ref] = p
	s.started[ref] = true
	s.mu.Unlock()
	s.savePids()
	s.log.Info("service started", "resource", ref, "pid", p.pid)
	return p, nil
}

func exitText(err error) string {
	if err == nil {
		return "exit status 0"
	}
	return err.Error()
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
	s.savePids()
	s.log.Info("service stopped", "resource", ref, "pid", p.pid)
}

func (s *supervisor) terminate(p *proc) {
	// Signal the group even when the leader has exited: what it started may still run.
	syscall.Kill(-p.pid, syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(s.stopTimeout):
	}
	// Whatever of the group is left after the grace period is killed.
	syscall.Kill(-p.pid, syscall.SIGKILL)
	<-p.done
}

// stopAll stops every service at once, so a shutdown waits one stop timeout, not one per service.
func (s *supervisor) stopAll() {
	s.mu.Lock()
	refs := make([]string, 0, len(s.procs))
	for ref := range s.procs {
		refs = append(refs, ref)
	}
	s.mu.Unlock()
	var wg sync.WaitGroup
	for _, ref := range refs {
		wg.Go(func() { s.stop(ref) })
	}
	wg.Wait()
}

func (s *supervisor) savePids() {
	s.mu.Lock()
	recs := make(map[string]pidRecord, len(s.procs))
	for ref, p := range s.procs {
		start, _ := procStart(p.pid)
		recs[ref] = pidRecord{Pid: p.pid, Start: start}
	}
	s.mu.Unlock()
	if err := writeJSONAtomic(filepath.Join(s.stateDir, pidsFile), recs); err != nil {
		s.log.Error("saving service pids", "err", err)
	}
}

// killLeftovers kills the process groups a previous hostd started and did not stop (it
// crashed or was killed), so that every service runs under this hostd's supervision.
func (s *supervisor) killLeftovers() {
	var recs map[string]pidRecord
	if _, err := readJSON(filepath.Join(s.stateDir, pidsFile), &recs); err != nil {
		s.log.Warn("reading service pids", "err", err)
		return
	}
	var wg sync.WaitGroup
	for ref, r := range recs {
		start, err := procStart(r.Pid)
		if err != nil || start != r.Start || r.Pid <= 1 {
			continue // gone, or the pid now belongs to something else
		}
		wg.Go(func() {
			s.log.Info("stopping a service left from a previous run", "resource", ref, "pid", r.Pid)
			syscall.Kill(-r.Pid, syscall.SIGTERM)
			deadline := time.Now().Add(s.stopTimeout)
			for time.Now().Before(deadline) && groupAlive(r.Pid) {
				time.Sleep(50 * time.Millisecond)
			}
			syscall.Kill(-r.Pid, syscall.SIGKILL)
		})
	}
	wg.Wait()
	s.savePids()
}

// groupAlive reports whether any process of group pgid still runs (zombies do not count:
// they are dead and wait for their parent to reap them).
func groupAlive(pgid int) bool {
	if err := syscall.Kill(-pgid, 0); errors.Is(err, syscall.ESRCH) {
		return false
	}
	state, err := procState(pgid)
	return err != nil || state != "Z"
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

func procState(pid int) (string, error) {
	f, err := procStatFields(pid)
	if err != nil {
		return "", err
	}
	return f[0], nil
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
