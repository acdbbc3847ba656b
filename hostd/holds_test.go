package hostd

import (
	"fmt"
	"os"
	"reflect"
	"strings"
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
	// Found as declared for an untaken module, it is still not hostd's: a change to it is held
	// like any file hostd finds, not put back.
	b.write("/etc/app.conf", "changed\n", 0o644)
	if r := b.reconcile(d).want(t, "app/conf", hq.StateHeld, false, false); !strings.HasPrefix(r.HoldReason, "would overwrite /etc/app.conf") {
		t.Fatalf("hold reason %q", r.HoldReason)
	}
	if b.read("/etc/app.conf") != "changed\n" {
		t.Fatal("a file found for an untaken module was put back")
	}
}

func TestTakenAdoptionIsOwned(t *testing.T) {
	b := setup(t)
	b.write("/etc/app.conf", "same\n", 0o644)
	d := b.decl(mod("app", true, file("conf", "/etc/app.conf", "same\n")))
	b.reconcile(d).want(t, "app/conf", hq.StateApplied, true, false)
	// Adopted by a taken module, it is managed: drift is put back.
	b.write("/etc/app.conf", "changed\n", 0o644)
	if r := b.reconcile(d).want(t, "app/conf", hq.StateApplied, true, true); !r.Drift {
		t.Fatal("drift of an adopted file not reported")
	}
	// And removed with its module.
	b.reconcile(b.decl())
	if b.exists("/etc/app.conf") {
		t.Fatal("a file a taken module adopted was left when the module went")
	}
}

// TestUntakenAdoptionIsForgottenNotDeleted: what hostd found as declared for an untaken module
// was never hostd's, so unassigning the module forgets it and leaves it on the machine.
func TestUntakenAdoptionIsForgottenNotDeleted(t *testing.T) {
	b := setup(t)
	b.write("/etc/app.conf", "same\n", 0o644)
	os.MkdirAll(b.path("/srv/data"), 0o755)
	os.Chmod(b.path("/srv/data"), 0o755)
	b.write("/etc/pair/a.conf", "A1\n", 0o644)
	b.write("/etc/pair/b.conf", "B1\n", 0o644)
	d := b.decl(pair("A1\n", "B1\n", file("conf", "/etc/app.conf", "same\n"),
		hq.Resource{Name: "data", Kind: hq.KindDirectory, Path: "/srv/data"}))
	rs := b.reconcile(d)
	for _, ref := range []string{"app/a", "app/b", "app/conf", "app/data"} {
		rs.want(t, ref, hq.StateApplied, true, false)
	}
	b.reconcile(d)

	b.reconcile(b.decl())
	for _, p := range []string{"/etc/app.conf", "/srv/data", "/etc/pair/a.conf", "/etc/pair/b.conf"} {
		if !b.exists(p) {
			t.Errorf("%s, found on the node for an untaken module, was deleted when the module went", p)
		}
	}
	if len(b.eng.ledger.Resources) != 0 {
		t.Fatalf("the ledger still names %v", b.eng.ledger.Resources)
	}
}

// TestUntakenAdoptionThenTakenIsOwned: once the module is taken, what it found is hostd's.
func TestUntakenAdoptionThenTakenIsOwned(t *testing.T) {
	b := setup(t)
	b.write("/etc/app.conf", "same\n", 0o644)
	d := b.decl(mod("app", false, file("conf", "/etc/app.conf", "same\n")))
	b.reconcile(d).want(t, "app/conf", hq.StateApplied, true, false)
	taken := b.decl(d.Modules[0])
	taken.Modules[0].Taken = true
	taken.Digest = taken.ComputeDigest()
	b.reconcile(taken).want(t, "app/conf", hq.StateApplied, true, false)
	b.reconcile(b.decl())
	if b.exists("/etc/app.conf") {
		t.Fatal("a file owned after take was left when the module went")
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

// A held file's result says what hostd found there, which Take would overwrite: the content of
// a small text file, and of a binary or large one only that it is left out. Past the report's
// budget of such content, the files held later say so.
func TestHeldFileSaysWhatWasFound(t *testing.T) {
	b := setup(t)
	b.write("/etc/app/text.conf", "theirs\n", 0o644)
	b.write("/etc/app/empty.conf", "", 0o644)
	b.write("/etc/app/blob", "\x00\x01\x02", 0o644)
	b.write("/etc/app/large", strings.Repeat("x", hq.MaxDriftFound+1), 0o644)
	b.write("/etc/app/dir/inner", "i", 0o644)
	d := b.decl(mod("app", false,
		file("text", "/etc/app/text.conf", "ours\n"),
		file("empty", "/etc/app/empty.conf", "ours\n"),
		file("blob", "/etc/app/blob", "ours\n"),
		file("large", "/etc/app/large", "ours\n"),
		file("dir", "/etc/app/dir", "ours\n"),
		file("fresh", "/etc/app/fresh.conf", "ours\n"),
	))
	rs := b.reconcile(d)
	for ref, want := range map[string]*hq.FoundFile{
		"app/text":  {Text: "theirs\n"},
		"app/empty": {},
		"app/blob":  {Omitted: hq.FoundBinary},
		"app/large": {Omitted: hq.FoundTooLarge},
		"app/dir":   nil, // a directory where a file is declared: no file's content
	} {
		r := rs.want(t, ref, hq.StateHeld, false, false)
		if !reflect.DeepEqual(r.HeldFound, want) {
			t.Errorf("%s: held_found %+v, want %+v", ref, r.HeldFound, want)
		}
	}
	if r := rs.want(t, "app/fresh", hq.StateApplied, true, true); r.HeldFound != nil {
		t.Errorf("an applied file says what was found: %+v", r.HeldFound)
	}
	if err := hq.ValidateReport(hq.Report{Results: b.eng.Reconcile(t.Context(), d)}); err != nil {
		t.Fatalf("the controller would refuse the results: %v", err)
	}

	// Take overwrites them, and nothing is held any more.
	taken := b.decl(d.Modules[0])
	taken.Modules[0].Taken = true
	taken.Digest = taken.ComputeDigest()
	for _, r := range b.reconcile(taken) {
		if r.HeldFound != nil {
			t.Errorf("%s/%s says what was found after take: %+v", r.Module, r.Resource, r.HeldFound)
		}
	}
}

func TestHeldFoundStaysWithinTheReportsBudget(t *testing.T) {
	b := setup(t)
	var rs []hq.Resource
	big := strings.Repeat("y", hq.MaxDriftFound-1) + "\n"
	n := hq.MaxHeldFound/hq.MaxDriftFound + 2
	for i := range n {
		p := fmt.Sprintf("/etc/many/f%02d", i)
		b.write(p, big, 0o644)
		rs = append(rs, file(fmt.Sprintf("f%02d", i), p, "ours\n"))
	}
	total, tooMany := 0, 0
	for _, r := range b.reconcile(b.decl(mod("many", false, rs...))) {
		switch f := r.HeldFound; {
		case f == nil:
			t.Fatalf("%s says nothing of what was found", r.Resource)
		case f.Omitted == hq.FoundTooMany:
			tooMany++
		default:
			total += len(f.Text)
		}
	}
	if total > hq.MaxHeldFound || tooMany == 0 || total == 0 {
		t.Fatalf("%d bytes of content carried, %d files over the budget", total, tooMany)
	}
}
