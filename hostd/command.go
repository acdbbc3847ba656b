package hostd

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/meshhq/hq"
)

// maxCaptured bounds how much of a command's output is kept while it runs: its end, where the
// reason for a failure usually is (hq.OutputTail keeps less). A chatty validate or action must
// not exhaust memory.
const maxCaptured = 64 << 10

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	max int
	b   []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	n := len(p)
	if len(p) >= t.max {
		t.b = append(t.b[:0], p[len(p)-t.max:]...)
		return n, nil
	}
	if over := len(t.b) + len(p) - t.max; over > 0 {
		t.b = t.b[:copy(t.b, t.b[over:])]
	}
	t.b = append(t.b, p...)
	return n, nil
}

func (t *tailBuffer) String() string { return string(t.b) }

// runCommand runs args to completion in its own process group (so a timeout kills everything it
// started) and returns an error carrying the end of its output when it fails.
func runCommand(ctx context.Context, timeout time.Duration, dir string, args []string) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	cmd.Dir = dir
	cmd.Env = commandEnv(nil)
	// One writer for both, so exec writes to it from one goroutine at a time.
	out := &tailBuffer{max: maxCaptured}
	cmd.Stdout = out
	cmd.Stderr = out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = time.Second
	err := cmd.Run()
	if err == nil {
		return nil
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		err = fmt.Errorf("timed out after %s", timeout)
	}
	return withOutput(err, out.b)
}

// withOutput is err followed by the end of what the command printed (hq.OutputTail: its last
// lines, bounded and cleaned), which says why it failed far better than an exit status.
func withOutput(err error, output []byte) error {
	if o := hq.OutputTail(output); o != "" {
		return fmt.Errorf("%w: %s", err, o)
	}
	return err
}

// commandEnv is hostd's environment without its own HOSTD_* variables (the node token must not
// leak into what it runs) and without the controller's HQ_* ones (hq demo runs hosts inside the
// controller's process, with its admin token), plus extra, in a stable order.
func commandEnv(extra map[string]string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "HOSTD_") || strings.HasPrefix(kv, "HQ_") {
			continue
		}
		if k, _, _ := strings.Cut(kv, "="); hasKey(extra, k) {
			continue
		}
		env = append(env, kv)
	}
	keys := make([]string, 0, len(extra))
	for k := range extra {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		env = append(env, k+"="+extra[k])
	}
	return env
}

func hasKey(m map[string]string, k string) bool {
	_, ok := m[k]
	return ok
}
