package hostd

import (
	"context"
	"fmt"
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
