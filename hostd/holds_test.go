package hostd

import (
	"os"
	"testing"

	"github.com/meshhq/hq"
)

func TestHoldsWithReasonsAndDependents(t *testing.T) {
	b := setup(t)
	b.write("/var/lib/route-proxy/ca", "their ca", 0o600)
	os.Chmod(b.path("/var/lib/route-proxy"), 0o700)
	b.write("/etc/route-proxy/proxy.conf", "their conf", 0o644)
	d := b.decl(mod("route-proxy", false,
		hq.Resource{Name: "state", Kind: hq.KindDirectory, Path: "/var/lib/route-proxy"},
		file("ca", "/var/lib/route-proxy/ca", "our ca"),
		file("conf", "/etc/route-proxy/proxy.conf", "our conf"),
		file("fresh", "/etc/route-proxy/fresh.conf", "f"),
		hq.Resource{Name: "proxy", Kind: hq.KindService, Command: []string{"sleep", "60"}, RestartOn: []string{"conf"}},
		hq.Resource{Name: "setup", Kind: hq.KindAction, Command: []string{"true"}, Gate: ptr(true), RestartOn: nil},
	))
	rs := b.reconcile(d)
	want := map[string]string{
		"route-proxy/state": "would overwrite /var/lib/route-proxy, found on this node; not applied until route-proxy is taken",
		"route-proxy/ca":    "depends on held route-proxy/state",
		"route-proxy/conf":  "would overwrite /etc/route-proxy/proxy.conf, found on this node; not applied until route-proxy is taken",
		"route-proxy/proxy": "depends on held route-proxy/conf",
	}
	for ref, reason := range want {
		if r := rs.want(t, ref, hq.StateHeld, false, false); r.HoldReason != reason {
			t.Errorf("%s: hold reason %q, want %q", ref, r.HoldReason, reason)
		}
	}
	rs.want(t, "route-proxy/fresh", hq.StateApplied, true, true)
	rs.want(t, "route-proxy/setup", hq.StateApplied, true, true)
	if b.eng.sup.get("route-proxy/proxy") != nil {
		t.Fatal("a held service was started")
	}
	if b.read("/var/lib/route-proxy/ca") != "their ca" || b.mode("/var/lib/route-proxy") != 0o700 {
		t.Fatal("held state was touched")
	}
	line := hq.TallyResults(b.eng.Reconcile(t.Context(), d), d.ResourceCount(), nil).Line()
	if line != "applied 2 resource(s), 4 held for untaken modules (route-proxy: 4)" {
		t.Fatalf("report line %q", line)
	}

	// Take: hostd overwrites what it found and manages it from then on.
	taken := b.decl(d.Modules[0])
	taken.Modules[0].Taken = true
	taken.Digest = taken.ComputeDigest()
	rs = b.reconcile(taken)
	for ref := range want {
		rs.want(t, ref, hq.StateApplied, true, true)
		if b.eng.ledger.Resources[ref] == nil {
			t.Fatalf("%s is not in the ledger after take", ref)
		}
	}
	if b.read("/var/lib/route-proxy/ca") != "our ca" || b.mode("/var/lib/route-proxy") != 0o755 {
		t.Fatal("take did not overwrite")
	}
	if got := b.eng.ledger.Resources["route-proxy/conf"].Wrote; got != "replaced" {
		t.Fatalf("ledger says %q for a file replaced on take", got)
	}
}

func TestHeldGateHoldsWhatFollows(t *testing.T) {
	b := setup(t)
	b.write("/etc/db.conf", "theirs", 0o644)
	d := b.decl(mod("db", false,
		hq.Resource{Name: "conf", Kind: hq.KindFile, Path: "/etc/db.conf", Content: "ours", Gate: ptr(true)},
		file("after", "/etc/after.conf", "a"),
	))
	rs := b.reconcile(d)
	rs.want(t, "db/conf", hq.StateHeld, false, false)
	if r := rs.want(t, "db/after", hq.StateHeld, false, false); r.HoldReason != "depends on held db/conf" {
		t.Fatalf("hold reason %q", r.HoldReason)
	}
	if b.exists("/etc/after.conf") {
		t.Fatal("a resource after a held gate was applied")
	}
}

func TestAdoptsWhatAlreadyMatches(t *testing.T) {
	b := setup(t)
	b.write("/etc/app.conf", "same\n", 0o644)
	os.MkdirAll(b.path("/srv/data"), 0o755)
	os.Chmod(b.path("/srv/data"), 0o755)
	d := b.decl(mod("app", false, file("conf", "/etc/app.conf", "same\n"),
		hq.Resource{Name: "data", Kind: hq.KindDirectory, Path: "/srv/data"}))
	rs := b.reconcile(d)
	rs.want(t, "app/conf", hq.StateApplied, true, false)
	rs.want(t, "app/data", hq.StateApplied, true, false)
	for _, ref := range []string{"app/conf", "app/data"} {
		if en := b.eng.ledger.Resources[ref]; en == nil || en.Wrote != "adopted" {
			t.Fatalf("%s: ledger entry %+v, want adopted", ref, en)
		}
	}
	// Adopted, it is managed: drift is put back.
	b.write("/etc/app.conf", "changed\n", 0o644)
	if r := b.reconcile(d).want(t, "app/conf", hq.StateApplied, true, true); !r.Drift {
		t.Fatal("drift of an adopted file not reported")
	}
}

func TestAbsentOfUnmanagedPathIsHeldUntilTaken(t *testing.T) {
	b := setup(t)
	b.write("/etc/legacy.conf", "keep me", 0o644)
	gone := hq.Resource{Name: "legacy", Kind: hq.KindAbsent, Path: "/etc/legacy.conf"}
	r := b.reconcile(b.decl(mod("cleanup", false, gone))).want(t, "cleanup/legacy", hq.StateHeld, false, false)
	if r.HoldReason != "would overwrite /etc/legacy.conf, found on this node; not applied until cleanup is taken" || !b.exists("/etc/legacy.conf") {
		t.Fatalf("hold reason %q", r.HoldReason)
	}
	b.reconcile(b.decl(mod("cleanup", true, gone))).want(t, "cleanup/legacy", hq.StateApplied, true, true)
	if b.exists("/etc/legacy.conf") {
		t.Fatal("taken absent path remains")
	}
}
