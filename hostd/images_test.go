package hostd

import (
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/internal/podmantest"
)

// imageExists reports whether podman's store holds image.
func imageExists(env *podmantest.Env, image string) bool {
	return env.Podman("images", "-q", "--filter", "reference="+image) != "" ||
		strings.Contains(env.Podman("images", "--digests", "--format", "{{.Repository}}@{{.Digest}}"), image)
}

// An image hostd brought is removed once no declared container or job has used it for the GC
// age, with a line saying so, and counted. Kept past that age: an image a held
// container of a module not taken uses, one a container hostd did not create uses, the one
// running now, and one hostd never used.
func TestImagesUnusedPastTheAgeAreRemoved(t *testing.T) {
	b, env := containerBed(t)
	b.manual = true
	b.eng.cfg.ImageGCAfter = 24 * time.Hour
	logs := &logBuffer{}
	b.eng.log = slog.New(slog.NewTextHandler(io.MultiWriter(logs, testWriter{t}), nil))
	old := env.Digest(env.Build("old", "old\n"))
	held := env.Digest(env.Build("held", "held\n"))
	other := env.Digest(env.Build("other", "other\n"))
	stranger := env.Digest(env.Build("stranger", "stranger\n"))
	port, heldPort := podmantest.FreePort(t), podmantest.FreePort(t)
	later := mod("later", false, podmantest.Web("held", held, heldPort))
	job := hq.Resource{Name: "once", Kind: hq.KindJob, Image: other, Command: []string{"true"}}

	rs := b.reconcile(b.decl(mod("app", true, podmantest.Web("web", old, port), job), later))
	rs.want(t, "app/web", hq.StateApplied, true, true)
	rs.want(t, "app/once", hq.StateApplied, true, true)
	if r := rs["later/held"]; r.Outcome != hq.StateHeld {
		t.Fatalf("the untaken module's container: %+v", r)
	}
	// Someone else's container of the image the job used: that image is in use.
	env.Podman("create", "--name", "someone-elses", other, "true")

	b.now = b.now.Add(time.Hour)
	now := b.decl(mod("app", true, podmantest.Web("web", env.Image, port)), later)
	b.reconcile(now).want(t, "app/web", hq.StateApplied, true, true)
	if !imageExists(env, old) {
		t.Fatal("an image unused for an hour was removed")
	}

	b.now = b.now.Add(25 * time.Hour)
	b.reconcile(now).want(t, "app/web", hq.StateApplied, true, false)
	if imageExists(env, old) {
		t.Fatalf("%s, unused for 26h, is still there", old)
	}
	for what, image := range map[string]string{"held": held, "someone else's": other, "running": env.Image, "never used": stranger} {
		if !imageExists(env, image) {
			t.Errorf("the %s image %s was removed", what, image)
		}
	}
	if n := b.eng.ImagesRemoved(); n != 1 {
		t.Errorf("%d image(s) counted removed, want 1", n)
	}
	if l := logs.String(); !strings.Contains(l, `msg="removed an image no declared container has used for 24h0m0s" image=`+old) {
		t.Errorf("no line for the removed image in:\n%s", l)
	}
	// podman would refuse to remove an image a container uses; hostd does not even try.
	if l := logs.String(); strings.Contains(l, "removing an unused image") {
		t.Errorf("hostd tried to remove an image in use:\n%s", l)
	}

	// A new engine reads what hostd brought from the state dir: the held image, no longer
	// declared, is removed a day later, and the running one still is not.
	b.restart()
	b.eng.cfg.ImageGCAfter = 24 * time.Hour
	env.Podman("rm", "-f", "hq-later-held")
	b.now = b.now.Add(25 * time.Hour)
	b.reconcile(b.decl(mod("app", true, podmantest.Web("web", env.Image, port))))
	if imageExists(env, held) || !imageExists(env, env.Image) || !imageExists(env, stranger) {
		t.Fatalf("after a restart: held %v running %v never used %v, want false true true",
			imageExists(env, held), imageExists(env, env.Image), imageExists(env, stranger))
	}
}

// Images are looked at when the engine starts and then at most once an hour: the reconciles in
// between that change nothing run no container CLI at all.
func TestImagesLookedAtHourlyNotEveryReconcile(t *testing.T) {
	b, env := containerBed(t)
	b.manual = true
	b.eng.cfg.ImageGCAfter = 24 * time.Hour
	d := b.decl(mod("app", true, podmantest.Web("web", env.Image, podmantest.FreePort(t))))
	b.reconcile(d).want(t, "app/web", hq.StateApplied, true, true)
	calls := func() int64 {
		before := b.eng.ctrs.cli.calls.Load()
		b.reconcile(d).want(t, "app/web", hq.StateApplied, true, false)
		return b.eng.ctrs.cli.calls.Load() - before
	}
	for _, step := range []time.Duration{time.Minute, 58 * time.Minute} {
		b.now = b.now.Add(step)
		if n := calls(); n != 0 {
			t.Fatalf("a reconcile that changed nothing, within the hour, ran the container CLI %d time(s)", n)
		}
	}
	b.now = b.now.Add(time.Minute)
	if n := calls(); n != 1 {
		t.Fatalf("the reconcile an hour on ran the container CLI %d time(s), want 1 (the listing of the containers)", n)
	}
}

// With a GC age of 0 no image is removed, however long it has gone unused.
func TestImagesGCAgeZeroRemovesNothing(t *testing.T) {
	b, env := containerBed(t)
	b.manual = true
	old := env.Digest(env.Build("old", "old\n"))
	port := podmantest.FreePort(t)
	b.reconcile(b.decl(mod("app", true, podmantest.Web("web", old, port))))
	b.reconcile(b.decl(mod("app", true, podmantest.Web("web", env.Image, port))))
	b.now = b.now.Add(30 * 24 * time.Hour)
	b.reconcile(b.decl(mod("app", true, podmantest.Web("web", env.Image, port))))
	if !imageExists(env, old) {
		t.Fatal("an image was removed with a GC age of 0")
	}
	// The same reconciles with an age would have removed it.
	b.eng.cfg.ImageGCAfter = 24 * time.Hour
	b.reconcile(b.decl(mod("app", true, podmantest.Web("web", env.Image, port))))
	if imageExists(env, old) {
		t.Fatal("the image was kept with a GC age of 24h too")
	}
}
