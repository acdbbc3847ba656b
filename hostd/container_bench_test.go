package hostd

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/internal/podmantest"
)

// BenchmarkNoopReconcile20Containers is one reconcile of 20 running containers already as
// declared: one podman ps, whatever their number.
func BenchmarkNoopReconcile20Containers(b *testing.B) {
	env := podmantest.New(b)
	env.Setenv(b)
	eng, err := NewEngine(EngineConfig{Root: b.TempDir(), StateDir: b.TempDir(), Interval: time.Minute, Node: "bench", StopTimeout: time.Second,
		ContainerNetworkPrefix: env.NetworkPrefix})
	if err != nil {
		b.Fatal(err)
	}
	defer eng.Close()
	d := containers20(env.Image, nil)
	ctx := context.Background()
	for _, r := range eng.Reconcile(ctx, d) {
		if r.Outcome != hq.StateApplied || !r.Changed {
			b.Fatalf("setup: %+v", r)
		}
	}
	eng.Reconcile(ctx, d) // lists them once and records their processes
	for b.Loop() {
		for _, r := range eng.Reconcile(ctx, d) {
			if r.Changed || r.Outcome != hq.StateApplied {
				b.Fatalf("a no-op reconcile changed %s: %+v", r.Resource, r)
			}
		}
	}
}

// BenchmarkOneContainerRecreated is a reconcile of 20 containers in which one's spec changed:
// it is pulled (here: found in the store), created beside the old one, switched and started.
func BenchmarkOneContainerRecreated(b *testing.B) {
	env := podmantest.New(b)
	env.Setenv(b)
	eng, err := NewEngine(EngineConfig{Root: b.TempDir(), StateDir: b.TempDir(), Interval: time.Minute, Node: "bench",
		StopTimeout: time.Second, StartGrace: 100 * time.Millisecond, ContainerNetworkPrefix: env.NetworkPrefix})
	if err != nil {
		b.Fatal(err)
	}
	defer eng.Close()
	ctx := context.Background()
	eng.Reconcile(ctx, containers20(env.Image, nil))
	i := 0
	for b.Loop() {
		i++
		gen := fmt.Sprint(i)
		d := containers20(env.Image, map[string]string{"GEN": gen})
		d.Generation = int64(i + 1)
		d.Digest = d.ComputeDigest()
		changed := 0
		for _, r := range eng.Reconcile(ctx, d) {
			if r.Outcome != hq.StateApplied {
				b.Fatalf("%s: %+v", r.Resource, r)
			}
			if r.Changed {
				changed++
			}
		}
		if changed != 1 {
			b.Fatalf("%d containers changed, want 1", changed)
		}
	}
}

// containers20 declares 20 sleeping containers that stop when told to; env, when set, is the
// first one's.
func containers20(image string, env map[string]string) *hq.Declaration {
	var rs []hq.Resource
	for i := range 20 {
		r := hq.Resource{Name: fmt.Sprintf("c%02d", i), Kind: hq.KindContainer, Image: image, Command: []string{"sh", "-c", "trap 'exit 0' TERM; sleep 3600 & wait"}}
		if i == 0 {
			r.Env = env
		}
		rs = append(rs, r)
	}
	d := &hq.Declaration{Node: "bench", Generation: 1, Modules: []hq.DeclaredModule{mod("bench", true, rs...)}}
	d.Digest = d.ComputeDigest()
	return d
}
