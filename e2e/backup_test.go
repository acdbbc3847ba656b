package e2e

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/meshhq/hq"
	hqclient "github.com/meshhq/hq/client"
)

// TestBackupRestoreDrill is docs/operating.md's drill: back up a controller's database while
// hosts report and modules are uploaded, change the mesh after the backup, stop, restore by
// copying the file back, restart. Every host goes on, none goes back in generation: the hosts
// are ahead of the restored database, so they are fenced and the controller raises their
// generations past theirs (as in seed 204), and then they converge on what the backup holds.
func TestBackupRestoreDrill(t *testing.T) {
	sqliteOnly(t, "hq backup copies a SQLite file; PostgreSQL is backed up with its own tools")
	ctx := context.Background()
	dir := t.TempDir()
	dbPath := filepath.Join(dir, "hq.db")
	ctl := startController(t, dbPath)
	addr := ctl.addr
	c := hqclient.New(ctl.url, adminToken)
	nodes := []string{"web-1", "web-2", "web-3"}
	hosts := map[string]*host{}
	for _, n := range nodes {
		hosts[n] = opsHost(t, c, n, "HOSTD_INTERVAL=200ms")
	}
	file := func(name, content string) []hq.Resource {
		return []hq.Resource{{Name: "conf", Kind: hq.KindFile, Path: "/etc/" + name + ".conf", Content: content}}
	}
	must[hqclient.PutResult](t)(c.PutModule(ctx, "base", file("base", "v1\n")))
	must[hqclient.PutResult](t)(c.PutModule(ctx, "later", file("later", "after the backup\n")))
	for _, n := range nodes {
		must[int64](t)(c.Assign(ctx, n, "base", false))
	}
	converged := func(what string, ok func(v hq.NodeView) bool) {
		t.Helper()
		waitFor(t, 30*time.Second, what, func() bool {
			for _, n := range nodes {
				v, err := c.Node(ctx, n)
				if err != nil || v.Status != hq.StatusConverged || !ok(v) {
					return false
				}
			}
			return true
		})
	}
	converged("every node converged on base", func(hq.NodeView) bool { return true })

	// The backup, while hosts report every 200ms and an upload lands every few milliseconds.
	var load sync.WaitGroup
	stop := make(chan struct{})
	load.Go(func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := c.PutModule(ctx, "churn", file("churn", fmt.Sprintf("%d\n", i))); err != nil {
				t.Error(err)
				return
			}
		}
	})
	backup := filepath.Join(t.TempDir(), "hq-backup.db")
	cmd := exec.Command(filepath.Join(bin, "hq"), "backup", backup)
	cmd.Env = append(os.Environ(), "HQ_DB="+dbPath)
	out, err := cmd.CombinedOutput()
	time.Sleep(300 * time.Millisecond) // reports go on after the backup too
	close(stop)
	load.Wait()
	if err != nil {
		t.Fatalf("hq backup: %v\n%s", err, out)
	}
	if _, err := os.Stat(backup + ".key"); err != nil {
		t.Fatalf("hq backup left no signing key beside the copy: %v", err)
	}

	// After the backup: a change the backup does not hold, applied by every host.
	before := map[string]int64{}
	for _, n := range nodes {
		before[n] = must[int64](t)(c.Assign(ctx, n, "later", false))
	}
	converged("every node converged on later", func(v hq.NodeView) bool { return v.AppliedGeneration == before[v.Name] })

	// Stop, restore (the file back, without the old WAL), restart on the same address.
	ctl.stop()
	for _, suffix := range []string{"", "-wal", "-shm"} {
		if err := os.Remove(dbPath + suffix); err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
	}
	copyFile(t, backup, dbPath)
	copyFile(t, backup+".key", dbPath+".key")
	startControllerAt(t, dbPath, addr)

	// Every host goes on past the generation it had applied, on what the backup holds.
	converged("every node converged past its generation, on the restored declaration", func(v hq.NodeView) bool {
		return v.AppliedGeneration > before[v.Name] && len(v.Assignments) == 1 && v.Assignments[0].Module == "base"
	})
	for _, n := range nodes {
		h := hosts[n]
		if got := readFile(filepath.Join(h.root, "etc/base.conf")); got != "v1\n" {
			t.Errorf("%s: base.conf %q", n, got)
		}
		if _, err := os.Stat(filepath.Join(h.root, "etc/later.conf")); !os.IsNotExist(err) {
			t.Errorf("%s: later.conf, which the restored database does not declare, is still there (%v)", n, err)
		}
		select {
		case <-h.done:
			t.Errorf("%s: hostd stopped", n)
		default:
		}
		// What the host itself took in, in its own log: never a generation below one before it.
		var last int64 = -1
		for _, m := range newDeclRE.FindAllStringSubmatch(h.out.String(), -1) {
			var g int64
			fmt.Sscan(m[1], &g)
			if g < last {
				t.Errorf("%s: took in generation %d after %d", n, g, last)
			}
			last = g
		}
		if last <= before[n] {
			t.Errorf("%s: the last declaration it took in is generation %d, not past %d", n, last, before[n])
		}
	}
}

var newDeclRE = regexp.MustCompile(`msg="new declaration" generation=(\d+)`)

func copyFile(t *testing.T, src, dst string) {
	t.Helper()
	in, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}
