package db

import (
	"context"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/meshhq/hq"
)

func cpuNow(tb testing.TB) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func module500() []hq.Resource {
	rs := make([]hq.Resource, 500)
	for i := range rs {
		rs[i] = hq.Resource{Name: fmt.Sprintf("f%03d", i), Kind: hq.KindFile, Path: fmt.Sprintf("/etc/app/f%03d", i), Content: "x\n"}
	}
	return rs
}

// BenchmarkAssign500 assigns a 500-resource module to a node: the rows declared set-based, the
// transitions and counts written by the triggers, the generation bumped, in one transaction.
//
//	go test ./db -run '^$' -bench Assign500 -benchtime 300x
func BenchmarkAssign500(b *testing.B) {
	s, _ := setup(b)
	ctx := context.Background()
	mustModule(b, s, "app", module500()...)
	for i := range b.N {
		mustNode(b, s, fmt.Sprintf("n%05d", i))
	}
	b.ResetTimer()
	cpu := cpuNow(b)
	for i := range b.N {
		if _, err := s.Assign(ctx, fmt.Sprintf("n%05d", i), "app", nil, nil); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(cpuNow(b)-cpu)/float64(b.N)/1e6, "cpu-ms/op")
}

// BenchmarkFirstApply500 ingests every node's first report of a 500-resource module: 500 rows
// pending→applied, their transitions and counts.
//
//	go test ./db -run '^$' -bench FirstApply500 -benchtime 300x
func BenchmarkFirstApply500(b *testing.B) {
	s, _ := setup(b)
	ctx := context.Background()
	rs := module500()
	mustModule(b, s, "app", rs...)
	reps := make([]hq.Report, b.N)
	for i := range b.N {
		n := fmt.Sprintf("n%05d", i)
		mustNode(b, s, n)
		mustAssign(b, s, n, "app")
		d, err := s.Compose(ctx, n, "bench")
		if err != nil {
			b.Fatal(err)
		}
		reps[i] = hq.Report{SendID: d.SendID, Generation: d.Generation, Digest: d.Digest, Results: make([]hq.Result, len(rs))}
		for j, r := range rs {
			reps[i].Results[j] = hq.Result{Module: "app", Resource: r.Name, Outcome: hq.StateApplied, Attempted: true, Changed: true}
		}
	}
	b.ResetTimer()
	cpu := cpuNow(b)
	for i := range b.N {
		if _, err := s.Ingest(ctx, fmt.Sprintf("n%05d", i), reps[i], IngestOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(cpuNow(b)-cpu)/float64(b.N)/1e6, "cpu-ms/op")
}
