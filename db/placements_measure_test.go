package db

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/internal/wait"
)

// TestMeasurePlacementOverAFleet times a placement over 10,000 nodes: the request (its first
// chunk), the whole fleet, and the mover's look at a fleet at rest. Run with HQ_MEASURE=1.
func TestMeasurePlacementOverAFleet(t *testing.T) {
	if os.Getenv("HQ_MEASURE") == "" {
		t.Skip("a measurement: HQ_MEASURE=1 runs it")
	}
	s, _ := setupSteppingRollouts(t)
	ctx := context.Background()
	const nodes = 10000
	rs := make([]hq.Resource, 10)
	for i := range rs {
		rs[i] = file(string(rune('a'+i))+".conf", "1")
	}
	mustModule(t, s, "app", rs...)
	if _, err := s.write.Exec(`WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < ? - 1)
		INSERT INTO nodes (name, token_hash, created_at, labels)
		SELECT printf('n%05d', i), printf('h%05d', i), '2026-11-30T00:00:00.000Z',
		       CASE WHEN i % 2 = 0 THEN '{"role":"web"}' ELSE '{"role":"db"}' END FROM n`, nodes); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	p, err := s.PutPlacement(ctx, hq.Placement{Name: "web", Module: "app", Selector: "role=web"})
	if err != nil {
		t.Fatal(err)
	}
	request := time.Since(start)
	wait.For(t, 10*time.Minute, "the placement on every node it matches", func() bool {
		if p, err = s.GetPlacement(ctx, "web"); err != nil {
			t.Fatal(err)
		}
		return p.Assigned >= p.Matched
	})
	all := time.Since(start)
	start = time.Now()
	work, err := s.placementWork(ctx)
	if err != nil || work {
		t.Fatalf("work %v, %v", work, err)
	}
	rest := time.Since(start)
	// A rollout over the same nodes, stepped by hand: the first step advances a chunk of the
	// first wave; once the wave is out, a step only evaluates (set-based) what is in flight.
	if _, err := s.PutPlacement(ctx, hq.Placement{Name: "web", Module: "app", Selector: "role=web",
		Rollout: &hq.RolloutPolicy{MaxUnavailable: hq.Amount{N: 10, Percent: true}}}); err != nil {
		t.Fatal(err)
	}
	rs[0].Content = "2"
	mustModule(t, s, "app", rs...)
	var steps []time.Duration
	for range 4 {
		start := time.Now()
		if _, err := s.stepRollouts(ctx); err != nil {
			t.Fatal(err)
		}
		steps = append(steps, time.Since(start))
	}
	r := mustRollouts(t, s, 1)
	t.Logf("rollout over %d nodes, 10%% in flight: steps %v; then %d in flight", r[0].Nodes, steps, r[0].InFlight)
	chunk := moveChunkRows / len(rs)
	t.Logf("placement over %d of %d nodes × %d resources: request (first chunk of %d) %s, all %s (%d chunks, %s each on average), a look at rest %s",
		p.Matched, nodes, len(rs), chunk, request, all, (p.Matched+chunk-1)/chunk, all/time.Duration((p.Matched+chunk-1)/chunk), rest)
}
