package hostd

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
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

// BenchmarkApplyNoop500Files is hostd apply's work, in process, on a converged node of 10
// directories and 500 files: read and check the module file, open the engine (lock, ledger,
// journal, litter, services), reconcile, close.
func BenchmarkApplyNoop500Files(b *testing.B) {
	root, state := b.TempDir(), b.TempDir()
	var rs []hq.Resource
	for d := range 10 {
		rs = append(rs, hq.Resource{Name: fmt.Sprintf("d%02d", d), Kind: hq.KindDirectory, Path: fmt.Sprintf("/d%02d", d), Mode: "0755"})
	}
	for i := range 500 {
		rs = append(rs, hq.Resource{Name: fmt.Sprintf("f%04d", i), Kind: hq.KindFile, Path: fmt.Sprintf("/d%02d/f%04d.conf", i/50, i),
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
