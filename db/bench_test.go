package db

import (
	"context"
	"fmt"
	"slices"
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

// BenchmarkAssignTemplated500 assigns a 500-resource module whose contents are templates to a
// node that has another module already: what the declaration's size bound weighs on.
//
//	go test ./db -run '^$' -bench AssignTemplated500 -benchtime 1000x
func BenchmarkAssignTemplated500(b *testing.B) {
	s, _ := setup(b)
	ctx := context.Background()
	rs := module500()
	for i := range rs {
		rs[i].Content = "{{.Node}} {{.Vars.tier}}\n"
	}
	mustModule(b, s, "app", rs...)
	mustModule(b, s, "base", hq.Resource{Name: "motd", Kind: hq.KindFile, Path: "/etc/motd", Content: "hello\n"})
	for i := range b.N {
		n := fmt.Sprintf("n%05d", i)
		mustNode(b, s, n)
		if _, err := s.SetVars(ctx, n, map[string]string{"tier": "gold"}, nil); err != nil {
			b.Fatal(err)
		}
		mustAssign(b, s, n, "base")
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

// BenchmarkIngestWhilePruning ingests steady reports while retention prunes a history of
// 200,000 old transitions beside them, and reports the slowest reports: a pruning window is a
// short transaction, so a report waits for one window at most, never for the whole prune.
//
//	go test ./db -run '^$' -bench IngestWhilePruning -benchtime 2000x
func BenchmarkIngestWhilePruning(b *testing.B) {
	for _, prune := range []bool{false, true} {
		b.Run(fmt.Sprintf("pruning=%v", prune), func(b *testing.B) {
			s, clock := setup(b)
			ctx := context.Background()
			// Old history of many nodes, each with more than the rows retention keeps, written
			// before today's as history is.
			if _, err := s.write.Exec(`WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 199999)
				INSERT INTO transitions (node, module, resource, from_state, to_state, at, reason)
				SELECT 'old-' || (i % 1000), 'app', 'r' || i, 'pending', 'applied', '2026-01-01T00:00:00.000Z', 'applied' FROM n`); err != nil {
				b.Fatal(err)
			}
			rs := module500()
			mustModule(b, s, "app", rs...)
			mustNode(b, s, "web-1")
			mustAssign(b, s, "web-1", "app")
			d := mustCompose(b, s, "web-1", "bench")
			rep := hq.Report{SendID: d.SendID, Generation: d.Generation, Digest: d.Digest, Results: make([]hq.Result, len(rs))}
			for j, r := range rs {
				rep.Results[j] = hq.Result{Module: "app", Resource: r.Name, Outcome: hq.StateApplied, Attempted: true, Changed: true}
			}
			if _, err := s.Ingest(ctx, "web-1", rep, IngestOptions{}); err != nil {
				b.Fatal(err)
			}
			for j := range rep.Results {
				rep.Results[j].Changed = false
			}
			clock.Advance(time.Hour)
			done := make(chan struct{})
			pruned := make(chan map[string]int64, 1)
			if prune {
				go func() {
					total := map[string]int64{}
					for {
						select {
						case <-done:
							pruned <- total
							return
						default:
						}
						r := DefaultRetention
						r.For = 24 * time.Hour
						del, err := s.Prune(ctx, r)
						if err != nil {
							b.Error(err)
						}
						for k, v := range del {
							total[k] += v
						}
					}
				}()
			}
			lat := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for range b.N {
				start := time.Now()
				if _, err := s.Ingest(ctx, "web-1", rep, IngestOptions{}); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(start))
			}
			b.StopTimer()
			close(done)
			if prune {
				<-pruned
				var left int
				if err := s.read.QueryRow(`SELECT COUNT(*) FROM transitions WHERE node LIKE 'old-%'`).Scan(&left); err != nil {
					b.Fatal(err)
				}
				if left == 200000 {
					b.Fatal("nothing was pruned while the reports were ingested")
				}
				b.ReportMetric(float64(200000-left), "pruned")
			}
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
			b.ReportMetric(float64(lat[len(lat)-1].Microseconds())/1000, "max-ms")
		})
	}
}

// BenchmarkWatcherTick50000 is what the SQLite watcher reads every second to see changes made
// by other processes, at 50,000 nodes: "total", the count and sum of the generations it reads
// each tick, and "list", every node's generation, which it reads only when the total moved.
//
//	go test ./db -run '^$' -bench WatcherTick50000 -benchtime 20x
func BenchmarkWatcherTick50000(b *testing.B) {
	s, _ := setup(b)
	mustNode(b, s, "n0")
	if _, err := s.write.Exec(`WITH RECURSIVE i(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM i WHERE n < 49999)
		INSERT INTO nodes (name, token_hash, created_at)
		SELECT 'n' || n, 'h' || n, (SELECT created_at FROM nodes WHERE name = 'n0') FROM i`); err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.Run("total", func(b *testing.B) {
		for b.Loop() {
			if _, err := s.rq.NodeGenerationTotal(ctx); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("list", func(b *testing.B) {
		for b.Loop() {
			if _, err := s.rq.NodeGenerationList(ctx); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkFleetStatus reads what /status, the metrics and the mesh page read, on a fleet of
// 10,000 and 50,000 nodes, 1 in 100 of them stuck and the rest converged: MeshStatus (/status),
// Figures (/metrics), and the page's first 50 nodes that are not converged.
//
//	go test ./db -run '^$' -bench FleetStatus -benchtime 20x
func BenchmarkFleetStatus(b *testing.B) {
	for _, n := range []int{10_000, 50_000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			s, _ := setup(b)
			mustNode(b, s, "n0")
			at := hq.FormatTime(s.clock())
			if _, err := s.write.Exec(`WITH RECURSIVE i(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM i WHERE n < ?)
				INSERT INTO nodes (name, token_hash, created_at, last_report_at, resources_applied, resources_stuck)
				SELECT printf('n%05d', n), 'h' || n, ?2, ?2, 500 - (n % 100 = 0), n % 100 = 0 FROM i`, n-1, at); err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			b.Run("MeshStatus", func(b *testing.B) {
				for b.Loop() {
					if st, err := s.MeshStatus(ctx); err != nil || st.Nodes["total"] != n {
						b.Fatal(st.Nodes, err)
					}
				}
			})
			b.Run("Figures", func(b *testing.B) {
				for b.Loop() {
					if _, err := s.Figures(ctx); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run("ListNodes", func(b *testing.B) {
				for b.Loop() {
					if p, err := s.ListNodes(ctx, NodeFilter{NotConverged: true, Limit: 50}); err != nil || len(p.Nodes) != 50 {
						b.Fatal(len(p.Nodes), err)
					}
				}
			})
			// What the mesh page lists beside MeshStatus, which has counted the fleet.
			b.Run("ListNodesUncounted", func(b *testing.B) {
				for b.Loop() {
					if p, err := s.ListNodes(ctx, NodeFilter{NotConverged: true, Limit: 50, Uncounted: true}); err != nil || len(p.Nodes) != 50 {
						b.Fatal(len(p.Nodes), err)
					}
				}
			})
		})
	}
}
