package hostd

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/meshhq/hq"
)

// BenchmarkNoopReconcile500Files is one reconcile of 500 files that are already as declared:
// what every interval costs on a converged node.
func BenchmarkNoopReconcile500Files(b *testing.B) {
	eng, err := NewEngine(EngineConfig{Root: b.TempDir(), StateDir: b.TempDir(), Interval: time.Minute})
	if err != nil {
		b.Fatal(err)
	}
	defer eng.Close()
	var rs []hq.Resource
	for i := range 500 {
		rs = append(rs, file(fmt.Sprintf("f%03d", i), fmt.Sprintf("/etc/bench/d%02d/f%03d.conf", i%20, i), strings.Repeat("line\n", 200)))
	}
	d := &hq.Declaration{Node: "web-1", Generation: 1, Modules: []hq.DeclaredModule{mod("bench", false, rs...)}}
	d.Digest = d.ComputeDigest()
	ctx := context.Background()
	for _, r := range eng.Reconcile(ctx, d) {
		if r.Outcome != hq.StateApplied || !r.Changed {
			b.Fatalf("setup: %+v", r)
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		for _, r := range eng.Reconcile(ctx, d) {
			if r.Changed || r.Outcome != hq.StateApplied {
				b.Fatalf("a no-op reconcile changed %s: %+v", r.Resource, r)
			}
		}
	}
}

// peersFiles writes the module file bench/peers/run.sh gives hostd apply: 10 directories and n
// files of one line, mode 0644, n/10 to a directory.
func peersFiles(b *testing.B, n int) string {
	b.Helper()
	var rs []hq.Resource
	for d := range 10 {
		rs = append(rs, hq.Resource{Name: fmt.Sprintf("d%02d", d), Kind: hq.KindDirectory, Path: fmt.Sprintf("/d%02d", d), Mode: "0755"})
	}
	for i := range n {
		rs = append(rs, hq.Resource{Name: fmt.Sprintf("f%04d", i), Kind: hq.KindFile, Path: fmt.Sprintf("/d%02d/f%04d.conf", i/(n/10), i),
			Content: fmt.Sprintf("setting_%d = value_%d\n", i, i), Mode: "0644"})
	}
	body, err := json.Marshal(map[string]any{"resources": rs})
	if err != nil {
		b.Fatal(err)
	}
	file := filepath.Join(b.TempDir(), "bench.json")
	if err := os.WriteFile(file, body, 0o600); err != nil {
		b.Fatal(err)
	}
	return file
}

// BenchmarkApplyCreate2000Files is hostd apply's work, in process, on a new machine: 10
// directories and 2,000 files into an empty root and an empty state dir, every file durable
// before the apply returns. What a first apply costs every new machine and every large rollout.
func BenchmarkApplyCreate2000Files(b *testing.B) {
	file := peersFiles(b, 2000)
	base := b.TempDir()
	n := 0
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		// Each run on a root and state dir of its own; the last run's are removed (and their
		// removal written back) outside the timer, so they do not weigh on this one.
		os.RemoveAll(filepath.Join(base, fmt.Sprint(n)))
		n++
		root, state := filepath.Join(base, fmt.Sprint(n), "root"), filepath.Join(base, fmt.Sprint(n), "state")
		if err := os.MkdirAll(root, 0o755); err != nil {
			b.Fatal(err)
		}
		syscall.Sync()
		b.StartTimer()
		a, err := Apply(context.Background(), ApplyConfig{Root: root, StateDir: state, File: file})
		if err != nil || a.ExitCode() != 2 {
			b.Fatalf("%v, exit %d", err, a.ExitCode())
		}
	}
}

// BenchmarkApplyNoop500Files is hostd apply's work, in process, on a converged node of 10
// directories and 500 files: read and check the module file, open the engine (lock, ledger,
// journal, litter, services), reconcile, close.
func BenchmarkApplyNoop500Files(b *testing.B) {
	root, state := b.TempDir(), b.TempDir()
	file := peersFiles(b, 500)
	cfg := ApplyConfig{Root: root, StateDir: state, File: file}
	if a, err := Apply(context.Background(), cfg); err != nil || a.ExitCode() != 2 {
		b.Fatalf("setup: %v, exit %d", err, a.ExitCode())
	}
	b.ReportAllocs()
	for b.Loop() {
		a, err := Apply(context.Background(), cfg)
		if err != nil || a.ExitCode() != 0 {
			b.Fatalf("%v, exit %d", err, a.ExitCode())
		}
	}
}

// BenchmarkFilesChanged is one reconcile that changes n files of 500 (their content), the rest as
// declared: what a rollout of a change costs a converged node.
func BenchmarkFilesChanged(b *testing.B) {
	for _, n := range []int{1, 4, 16, 64} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			eng, err := NewEngine(EngineConfig{Root: b.TempDir(), StateDir: b.TempDir(), Interval: time.Minute})
			if err != nil {
				b.Fatal(err)
			}
			defer eng.Close()
			decl := func(gen int64) *hq.Declaration {
				var rs []hq.Resource
				for i := range 500 {
					content := fmt.Sprintf("setting_%d = value_%d\n", i, i)
					if i < n {
						content += fmt.Sprintf("generation %d\n", gen)
					}
					rs = append(rs, file(fmt.Sprintf("f%03d", i), fmt.Sprintf("/etc/bench/d%02d/f%03d.conf", i%10, i), content))
				}
				d := &hq.Declaration{Node: "web-1", Generation: gen, Modules: []hq.DeclaredModule{mod("bench", true, rs...)}}
				d.Digest = d.ComputeDigest()
				return d
			}
			ctx := context.Background()
			gen := int64(1)
			eng.Reconcile(ctx, decl(gen))
			b.ReportAllocs()
			for b.Loop() {
				b.StopTimer()
				gen++
				d := decl(gen)
				b.StartTimer()
				changed := 0
				for _, r := range eng.Reconcile(ctx, d) {
					if r.Outcome != hq.StateApplied {
						b.Fatalf("%+v", r)
					}
					if r.Changed {
						changed++
					}
				}
				if changed != n {
					b.Fatalf("%d changed, want %d", changed, n)
				}
			}
		})
	}
}
