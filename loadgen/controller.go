package loadgen

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"syscall"
	"time"
)

// Controller is an hq serve process the generator started on a database of its own.
type Controller struct {
	URL   string
	Token string
	DB    string
	Log   string
	cmd   *exec.Cmd
	done  chan struct{}
}

var servingRE = regexp.MustCompile(`"hq serving" addr=(\S+)`)

// StartController runs bin serve on dir/hq.db, listening on addr (127.0.0.1:0 for any port),
// logging to dir/hq.log, and waits until it listens. env is added to the controller's.
func StartController(bin, dir, addr, token string, env ...string) (*Controller, error) {
	return startController(bin, filepath.Join(dir, "hq.db"), filepath.Join(dir, "hq.log"), addr, token, env)
}

// StartControllers runs n controllers on one database, dir/hq.db (or whatever HQ_DB env
// names), the first listening on addrs[0] and logging to dir/hq.log, the k-th on addrs[k-1]
// (the last address for those past the list) logging to dir/hq-k.log. They start one after
// another: the first creates the signing key all of them must share (beside a SQLite file, or
// HQ_KEY_FILE), and one that started at the same time would create a key of its own. On an
// error the ones already started are stopped.
func StartControllers(bin, dir string, n int, addrs []string, token string, env ...string) ([]*Controller, error) {
	if n < 1 || len(addrs) == 0 {
		return nil, errors.New("no controller to start")
	}
	var ctls []*Controller
	for k := 1; k <= n; k++ {
		log := "hq.log"
		if k > 1 {
			log = fmt.Sprintf("hq-%d.log", k)
		}
		c, err := startController(bin, filepath.Join(dir, "hq.db"), filepath.Join(dir, log), addrs[min(k, len(addrs))-1], token, env)
		if err != nil {
			for _, c := range ctls {
				c.Stop()
			}
			return nil, fmt.Errorf("controller %d of %d: %w", k, n, err)
		}
		ctls = append(ctls, c)
	}
	return ctls, nil
}

func startController(bin, dbPath, logPath, addr, token string, env []string) (*Controller, error) {
	c := &Controller{Token: token, DB: dbPath, Log: logPath, done: make(chan struct{})}
	log, err := os.OpenFile(c.Log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	defer log.Close()
	start, _ := log.Seek(0, 2)
	c.cmd = exec.Command(bin, "serve")
	c.cmd.Env = append(append(os.Environ(), "HQ_ADDR="+addr, "HQ_DB="+c.DB, "HQ_ADMIN_TOKEN="+token), env...)
	c.cmd.Stdout, c.cmd.Stderr = log, log
	// A generator that dies (a signal, a closed pipe) takes its controller with it, rather than
	// leaving it serving a temporary database.
	c.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := c.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s serve: %w", bin, err)
	}
	go func() { c.cmd.Wait(); close(c.done) }()
	deadline := time.Now().Add(30 * time.Second)
	for {
		b, _ := os.ReadFile(c.Log)
		if int64(len(b)) > start {
			if m := servingRE.FindSubmatch(b[start:]); m != nil {
				c.URL = "http://" + string(m[1])
				return c, nil
			}
		}
		select {
		case <-c.done:
			return nil, fmt.Errorf("%s serve exited before it listened; see %s", bin, c.Log)
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			c.Kill()
			return nil, errors.New("the controller did not listen within 30s; see " + c.Log)
		}
	}
}

// Pid is the controller's process id.
func (c *Controller) Pid() int { return c.cmd.Process.Pid }

// Stop ends the controller with SIGTERM, then SIGKILL after 10 s.
func (c *Controller) Stop() {
	c.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-c.done:
	case <-time.After(10 * time.Second):
		c.Kill()
	}
}

// Kill ends the controller at once, as a crash would, and waits for it to be gone.
func (c *Controller) Kill() {
	c.cmd.Process.Kill()
	<-c.done
}
