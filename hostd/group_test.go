package hostd

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/meshhq/hq"
)

// member is a file in group "pair" whose validate refuses content containing "bad".
func member(name, path, content string) hq.Resource {
	return hq.Resource{Name: name, Kind: hq.KindFile, Path: path, Content: content, Group: "pair",
		Validate: []string{"/bin/sh", "-c", "! grep -q bad {path}"}}
}

func pair(a, b string, more ...hq.Resource) hq.DeclaredModule {
	return mod("app", false, append([]hq.Resource{
		member("a", "/etc/pair/a.conf", a), member("b", "/etc/pair/b.conf", b)}, more...)...)
}

func (b *bed) noJournal() {
	b.t.Helper()
	if _, err := os.Stat(filepath.Join(b.state, journalFile)); !os.IsNotExist(err) {
		b.t.Fatalf("the group journal is still there (%v)", err)
	}
}

func TestGroupAppliesAllOrNothing(t *testing.T) {
	b := setup(t)
	other := func(c string) hq.Resource { return file("other", "/etc/other.conf", c) }
	rs := b.reconcile(b.decl(pair("A1\n", "B1\n", other("O1"))))
	for _, ref := range []string{"app/a", "app/b", "app/other"} {
		rs.want(t, ref, hq.StateApplied, true, true)
	}

	// B cannot apply: A keeps its old content, the file outside the group applies.
	d := b.decl(pair("A2\n", "bad\n", other("O2")))
	rs = b.reconcile(d)
	if r := rs.want(t, "app/b", hq.StateFailed, true, false); !strings.HasPrefix(r.Error, "validate: exit status 1") {
		t.Fatalf("b's error %q", r.Error)
	}
	if r := rs.want(t, "app/a", hq.StateGroupedPending, true, false); r.Error != "group pair: app/b failed" {
		t.Fatalf("a's error %q", r.Error)
	}
	rs.want(t, "app/other", hq.StateApplied, true, true)
	if a, bb, o := b.read("/etc/pair/a.conf"), b.read("/etc/pair/b.conf"), b.read("/etc/other.conf"); a != "A1\n" || bb != "B1\n" || o != "O2" {
		t.Fatalf("on disk: a %q, b %q, other %q", a, bb, o)
	}
	b.noLitter("/etc/pair")
	b.noJournal()
	if line := hq.TallyResults(b.eng.Reconcile(t.Context(), d), d.ResourceCount(), nil).Line(); line != "applied 1 resource(s), 1 failed, 1 grouped-pending" {
		t.Fatalf("report line %q", line)
	}

	// Both can: both apply.
	rs = b.reconcile(b.decl(pair("A3\n", "B3\n", other("O2"))))
	rs.want(t, "app/a", hq.StateApplied, true, true)
	rs.want(t, "app/b", hq.StateApplied, true, true)
	if a, bb := b.read("/etc/pair/a.conf"), b.read("/etc/pair/b.conf"); a != "A3\n" || bb != "B3\n" {
		t.Fatalf("on disk: a %q, b %q", a, bb)
	}
	b.noLitter("/etc/pair")
	b.noJournal()
}

func TestGroupNewMembersFailTogether(t *testing.T) {
	b := setup(t)
	rs := b.reconcile(b.decl(pair("A1\n", "bad\n")))
	rs.want(t, "app/b", hq.StateFailed, true, false)
	rs.want(t, "app/a", hq.StateGroupedPending, true, false)
	if b.exists("/etc/pair") {
		t.Fatal("a group that failed left its new files or directories behind")
	}
	if len(b.eng.ledger.Resources) != 0 {
		t.Fatalf("the ledger names %v for a group that never applied", b.eng.ledger.Resources)
	}
}

func TestGroupMemberAlreadyInPlaceTakesPart(t *testing.T) {
	b := setup(t)
	b.reconcile(b.decl(pair("A1\n", "B1\n")))
	rs := b.reconcile(b.decl(pair("A1\n", "bad\n")))
	rs.want(t, "app/a", hq.StateGroupedPending, true, false)
	rs = b.reconcile(b.decl(pair("A1\n", "B2\n")))
	rs.want(t, "app/a", hq.StateApplied, true, false)
	rs.want(t, "app/b", hq.StateApplied, true, true)
}

func TestGroupHeldMemberHoldsTheGroup(t *testing.T) {
	b := setup(t)
	b.write("/etc/pair/b.conf", "theirs\n", 0o644)
	d := b.decl(pair("A1\n", "B1\n"))
	rs := b.reconcile(d)
	if r := rs.want(t, "app/b", hq.StateHeld, false, false); !strings.HasPrefix(r.HoldReason, "would overwrite /etc/pair/b.conf") {
		t.Fatalf("hold reason %q", r.HoldReason)
	}
	if r := rs.want(t, "app/a", hq.StateGroupedPending, false, false); r.Error != "group pair: app/b held" {
		t.Fatalf("a's error %q", r.Error)
	}
	if b.exists("/etc/pair/a.conf") || b.read("/etc/pair/b.conf") != "theirs\n" {
		t.Fatal("a held group was partly applied")
	}

	taken := b.decl(d.Modules[0])
	taken.Modules[0].Taken = true
	taken.Digest = taken.ComputeDigest()
	rs = b.reconcile(taken)
	rs.want(t, "app/a", hq.StateApplied, true, true)
	rs.want(t, "app/b", hq.StateApplied, true, true)
}

func TestGroupBlockedByGateIsNotApplied(t *testing.T) {
	b := setup(t)
	gate := hq.Resource{Name: "migrate", Kind: hq.KindAction, Command: []string{"false"}}
	d := b.decl(mod("app", false, member("a", "/etc/pair/a.conf", "A1\n"), gate, member("b", "/etc/pair/b.conf", "B1\n")))
	rs := b.reconcile(d)
	if r := rs.want(t, "app/b", hq.StatePending, false, false); r.BlockedBy != "app/migrate" {
		t.Fatalf("b blocked by %q", r.BlockedBy)
	}
	if r := rs.want(t, "app/a", hq.StateGroupedPending, false, false); r.Error != "group pair: app/b blocked by app/migrate" {
		t.Fatalf("a's error %q", r.Error)
	}
	if b.exists("/etc/pair/a.conf") {
		t.Fatal("a member of a blocked group was applied")
	}
}

func TestGroupBackoff(t *testing.T) {
	b := setup(t)
	b.manual = true
	d := b.decl(pair("A1\n", "bad\n"))
	b.reconcile(d).want(t, "app/b", hq.StateFailed, true, false)

	// Half an interval later b waits, and so does its group.
	b.now = b.now.Add(testInterval / 2)
	rs := b.reconcile(d)
	if r := rs.want(t, "app/b", hq.StateFailed, false, false); !strings.HasPrefix(r.Error, "validate:") {
		t.Fatalf("a skipped member reports %q, not its last error", r.Error)
	}
	rs.want(t, "app/a", hq.StateGroupedPending, false, false)

	b.now = b.now.Add(testInterval)
	rs = b.reconcile(d)
	rs.want(t, "app/b", hq.StateFailed, true, false)
	rs.want(t, "app/a", hq.StateGroupedPending, true, false)
	if f := b.eng.fails.fails["app/a"]; f != nil {
		t.Fatalf("a partner has a back-off of its own: %+v", f)
	}
}

// pairService serves the pair it read at start: it writes its pid and both files to
// {root}/served, so a test can tell which process read which state.
func pairService(health string) hq.Resource {
	return hq.Resource{Name: "server", Kind: hq.KindService, Group: "pair", RestartOn: []string{"a", "b"},
		Health: &hq.Health{HTTP: health},
		Command: []string{"/bin/sh", "-c", "{ echo $$; cat {root}/etc/pair/a.conf {root}/etc/pair/b.conf; } > {root}/served.tmp; " +
			"mv {root}/served.tmp {root}/served; exec sleep 60"}}
}

// served returns the pid and pair the running server read at start, or 0 when the running
// server has not written them yet.
func (b *bed) served() (int, string) {
	p := b.eng.sup.get("app/server")
	c, err := os.ReadFile(b.path("/served"))
	if p == nil || err != nil {
		return 0, ""
	}
	pid, pair, _ := strings.Cut(string(c), "\n")
	if pid != strconv.Itoa(p.pid) {
		return 0, ""
	}
	return p.pid, pair
}

func TestGroupHealthFailureRollsBack(t *testing.T) {
	b := setup(t)
	// Healthy once the running server has read its pair, unless the pair holds A2.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		pid, pair := b.served()
		if pid == 0 || strings.Contains(pair, "A2") {
			http.Error(w, "unhealthy", http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	defer srv.Close()

	rs := b.reconcile(b.decl(pair("A1\n", "B1\n", pairService(srv.URL))))
	rs.want(t, "app/server", hq.StateApplied, true, true)
	before, got := b.served()
	if got != "A1\nB1\n" {
		t.Fatalf("served %q", got)
	}

	rs = b.reconcile(b.decl(pair("A2\n", "B2\n", pairService(srv.URL))))
	if r := rs.want(t, "app/server", hq.StateFailed, true, false); !strings.Contains(r.Error, "did not answer 2xx") {
		t.Fatalf("server's error %q", r.Error)
	}
	for _, ref := range []string{"app/a", "app/b"} {
		if r := rs.want(t, ref, hq.StateGroupedPending, true, false); r.Error != "group pair: app/server failed" {
			t.Fatalf("%s's error %q", ref, r.Error)
		}
	}
	if a, bb := b.read("/etc/pair/a.conf"), b.read("/etc/pair/b.conf"); a != "A1\n" || bb != "B1\n" {
		t.Fatalf("on disk after the rollback: a %q, b %q", a, bb)
	}
	// Restarted on the old state: a new process that read the old pair, and healthy.
	after, got := b.served()
	if after == 0 || after == before || got != "A1\nB1\n" {
		t.Fatalf("after the rollback pid %d (was %d) serves %q", after, before, got)
	}
	if p := b.eng.sup.get("app/server"); p == nil || !b.eng.sup.running(p) || !b.eng.sup.healthy(p) {
		t.Fatal("the server is not running healthy on the old state")
	}
	b.noLitter("/etc/pair")
	b.noJournal()
}

// TestGroupCrashBetweenCommitsIsRolledBackAtStart stops an engine between two commits of a
// group (with the failpoint) and starts another on the same state dir, as a hostd that was
// killed there and started again.
func TestGroupCrashBetweenCommitsIsRolledBackAtStart(t *testing.T) {
	b := setup(t)
	b.write("/etc/pair/old.conf", "old", 0o600)
	gone := hq.Resource{Name: "old", Kind: hq.KindAbsent, Path: "/etc/pair/old.conf", Group: "pair"}
	b.reconcile(b.decl(pair("A1\n", "B1\n")))

	d := b.decl(mod("app", true, member("a", "/etc/pair/a.conf", "A2\n"), member("b", "/etc/pair/b.conf", "B2\n"),
		member("c", "/etc/pair/new/c.conf", "C2\n"), gone))
	if err := b.eng.Admit(d); err != nil {
		t.Fatal(err)
	}
	crashed := b.eng
	crashed.cfg.FailpointGroupCommitPause = time.Hour
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		crashed.Reconcile(ctx, d)
	}()
	defer func() { cancel(); <-done; crashed.Close() }()
	waitFor(t, 5*time.Second, "the first commit", func() bool {
		c, _ := os.ReadFile(b.path("/etc/pair/a.conf"))
		return string(c) == "A2\n"
	})
	if b.read("/etc/pair/b.conf") != "B1\n" {
		t.Fatal("the failpoint did not pause after the first commit")
	}
	if _, err := os.Stat(filepath.Join(b.state, journalFile)); err != nil {
		t.Fatalf("no journal while the group is half committed: %v", err)
	}

	b.open()
	if a, bb := b.read("/etc/pair/a.conf"), b.read("/etc/pair/b.conf"); a != "A1\n" || bb != "B1\n" {
		t.Fatalf("after the restart: a %q, b %q", a, bb)
	}
	if b.exists("/etc/pair/new") || b.read("/etc/pair/old.conf") != "old" {
		t.Fatal("the new directory stayed or the absent path was not put back")
	}
	b.noLitter("/etc/pair")
	b.noJournal()
}

// TestJournalRecoveryFromAHandWrittenState rolls back every kind of member from a journal
// and a machine left as a crash at each point of a commit would leave them.
func TestJournalRecoveryFromAHandWrittenState(t *testing.T) {
	b := setup(t)
	abs := b.path
	// a: committed; its original kept as a hard link.
	b.write("/etc/pair/a.conf", "A1\n", 0o644)
	os.Link(abs("/etc/pair/a.conf"), abs("/etc/pair/.hostd-undo-1-a.conf"))
	b.write("/etc/pair/.hostd-new-1-a.conf", "A2\n", 0o644)
	os.Rename(abs("/etc/pair/.hostd-new-1-a.conf"), abs("/etc/pair/a.conf"))
	// b: staged, not committed, its link not made yet.
	b.write("/etc/pair/b.conf", "B1\n", 0o644)
	b.write("/etc/pair/.hostd-new-2-b.conf", "B2\n", 0o644)
	// c: new, in a directory its stage made.
	b.write("/etc/pair/new/c.conf", "C2\n", 0o644)
	// d: a directory whose mode commit changed.
	os.Mkdir(abs("/etc/pair/d"), 0o755)
	// e: an absent path, renamed aside.
	b.write("/etc/pair/.hostd-gone-1-e.conf", "E1", 0o600)
	// f: the link of an original made, then the crash, before the rename.
	b.write("/etc/pair/f.conf", "F1\n", 0o644)
	os.Link(abs("/etc/pair/f.conf"), abs("/etc/pair/.hostd-undo-1-f.conf"))
	j := journal{Group: "app/pair", Generation: 2, Members: []journalMember{
		{Ref: "app/a", Kind: hq.KindFile, Path: abs("/etc/pair/a.conf"), Existed: true, Aside: abs("/etc/pair/.hostd-undo-1-a.conf")},
		{Ref: "app/b", Kind: hq.KindFile, Path: abs("/etc/pair/b.conf"), Existed: true, Aside: abs("/etc/pair/.hostd-undo-2-b.conf"), Staged: abs("/etc/pair/.hostd-new-2-b.conf")},
		{Ref: "app/c", Kind: hq.KindFile, Path: abs("/etc/pair/new/c.conf"), MadeDirs: []string{abs("/etc/pair/new")}},
		{Ref: "app/d", Kind: hq.KindDirectory, Path: abs("/etc/pair/d"), Existed: true, WasDir: true, Mode: 0o700},
		{Ref: "app/e", Kind: hq.KindAbsent, Path: abs("/etc/pair/e.conf"), Existed: true, Aside: abs("/etc/pair/.hostd-gone-1-e.conf")},
		{Ref: "app/f", Kind: hq.KindFile, Path: abs("/etc/pair/f.conf"), Existed: true, Aside: abs("/etc/pair/.hostd-undo-1-f.conf")},
	}}
	if err := writeJSONAtomic(filepath.Join(b.state, journalFile), j); err != nil {
		t.Fatal(err)
	}

	b.restart()
	for p, want := range map[string]string{"/etc/pair/a.conf": "A1\n", "/etc/pair/b.conf": "B1\n", "/etc/pair/e.conf": "E1", "/etc/pair/f.conf": "F1\n"} {
		if got := b.read(p); got != want {
			t.Errorf("%s = %q, want %q", p, got, want)
		}
	}
	if b.exists("/etc/pair/new") {
		t.Error("the new file's directory is still there")
	}
	if m := b.mode("/etc/pair/d"); m != 0o700 {
		t.Errorf("directory mode %v, want 0700", m)
	}
	b.noLitter("/etc/pair")
	b.noJournal()
}

// tree is group "tree": a new directory, a file in it, and more members after them.
func tree(more ...hq.Resource) hq.DeclaredModule {
	return mod("app", false, append([]hq.Resource{
		{Name: "dir", Kind: hq.KindDirectory, Path: "/srv/tree", Mode: "0750", Group: "tree"},
		{Name: "a", Kind: hq.KindFile, Path: "/srv/tree/a.conf", Content: "A1\n", Group: "tree"}}, more...)...)
}

func TestGroupMakesADirectoryAndAFileInIt(t *testing.T) {
	b := setup(t)
	rs := b.reconcile(b.decl(tree()))
	rs.want(t, "app/dir", hq.StateApplied, true, true)
	rs.want(t, "app/a", hq.StateApplied, true, true)
	if m := b.mode("/srv/tree"); m != 0o750 || b.read("/srv/tree/a.conf") != "A1\n" {
		t.Fatalf("directory mode %v, file %q", m, b.read("/srv/tree/a.conf"))
	}
	if en := b.eng.ledger.Resources["app/dir"]; en == nil || en.Wrote != "created" {
		t.Fatalf("directory's ledger entry %+v", en)
	}
	b.noJournal()
	b.reconcile(b.decl(tree())).want(t, "app/dir", hq.StateApplied, true, false)
}

func TestGroupRollbackRemovesTheDirectoryItMade(t *testing.T) {
	// A service of the group that exits at once fails after both commits.
	bad := hq.Resource{Name: "svc", Kind: hq.KindService, Group: "tree", Command: []string{"/bin/sh", "-c", "exit 3"}}
	fileFirst := mod("app", false,
		hq.Resource{Name: "a", Kind: hq.KindFile, Path: "/srv/tree/a.conf", Content: "A1\n", Group: "tree"},
		hq.Resource{Name: "dir", Kind: hq.KindDirectory, Path: "/srv/tree", Mode: "0750", Group: "tree"}, bad)
	for name, m := range map[string]hq.DeclaredModule{"directory first": tree(bad), "file first": fileFirst} {
		t.Run(name, func(t *testing.T) {
			b := setup(t)
			rs := b.reconcile(b.decl(m))
			rs.want(t, "app/svc", hq.StateFailed, true, false)
			rs.want(t, "app/dir", hq.StateGroupedPending, true, false)
			rs.want(t, "app/a", hq.StateGroupedPending, true, false)
			if b.exists("/srv") {
				t.Fatal("the rollback left the directory the group made")
			}
			b.noJournal()
		})
	}
}

func TestGroupCrashAfterMakingADirectoryIsRolledBackAtStart(t *testing.T) {
	b := setup(t)
	d := b.decl(tree())
	if err := b.eng.Admit(d); err != nil {
		t.Fatal(err)
	}
	crashed := b.eng
	crashed.cfg.FailpointGroupCommitPause = time.Hour
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		crashed.Reconcile(ctx, d)
	}()
	defer func() { cancel(); <-done; crashed.Close() }()
	waitFor(t, 5*time.Second, "the directory's commit", func() bool {
		fi, err := os.Lstat(b.path("/srv/tree"))
		return err == nil && fi.Mode().Perm() == 0o750
	})

	b.open()
	if b.exists("/srv") {
		t.Fatal("recovery left the directory the group made")
	}
	b.noJournal()
}

// TestGroupRollbackThatFailsKeepsTheJournal: when a member cannot be put back, the journal is
// the only record of how to, so it stays, the members say the rollback failed, and no group
// applies until a restart has rolled the group back from it.
func TestGroupRollbackThatFailsKeepsTheJournal(t *testing.T) {
	b := setup(t)
	// Unhealthy while sabotage is set, after taking away the originals the rollback needs.
	var sabotage atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if sabotage.Load() {
			undo, _ := filepath.Glob(b.path("/etc/pair/.hostd-undo-*"))
			for _, u := range undo {
				os.Remove(u)
			}
			http.Error(w, "unhealthy", http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	defer srv.Close()
	svc := hq.Resource{Name: "server", Kind: hq.KindService, Group: "pair", Command: []string{"sleep", "60"},
		Health: &hq.Health{HTTP: srv.URL}}
	b.reconcile(b.decl(pair("A1\n", "B1\n", svc))).want(t, "app/server", hq.StateApplied, true, true)

	sabotage.Store(true)
	rs := b.reconcile(b.decl(pair("A2\n", "B2\n", svc)))
	for _, ref := range []string{"app/a", "app/b", "app/server"} {
		if r := rs.want(t, ref, hq.StateFailed, true, false); !strings.Contains(r.Error, "could not be rolled back") {
			t.Fatalf("%s's error %q", ref, r.Error)
		}
	}
	if _, err := os.Stat(filepath.Join(b.state, journalFile)); err != nil {
		t.Fatalf("the journal of a group that could not be rolled back is gone: %v", err)
	}

	sabotage.Store(false)
	d := b.decl(pair("A3\n", "B3\n", svc))
	rs = b.reconcile(d)
	for _, ref := range []string{"app/a", "app/b", "app/server"} {
		if r := rs.want(t, ref, hq.StateFailed, false, false); !strings.Contains(r.Error, "until hostd restarts") {
			t.Fatalf("%s's error %q", ref, r.Error)
		}
	}
	if b.read("/etc/pair/a.conf") == "A3\n" || b.read("/etc/pair/b.conf") == "B3\n" {
		t.Fatal("a group was applied while a journal is kept")
	}

	b.restart()
	b.noJournal()
	rs = b.reconcile(d)
	for _, ref := range []string{"app/a", "app/b", "app/server"} {
		rs.want(t, ref, hq.StateApplied, true, true)
	}
	b.noLitter("/etc/pair")
}

func TestGroupThatDoesNotApplyKeepsAMovedMembersOldFile(t *testing.T) {
	b := setup(t)
	b.reconcile(b.decl(pair("A1\n", "B1\n")))

	// a moves, b cannot apply: a stays where it was, and nothing is written at its new path.
	moved := mod("app", false, member("a", "/etc/pair/a2.conf", "A1\n"), member("b", "/etc/pair/b.conf", "bad\n"))
	rs := b.reconcile(b.decl(moved))
	rs.want(t, "app/b", hq.StateFailed, true, false)
	rs.want(t, "app/a", hq.StateGroupedPending, true, false)
	if !b.exists("/etc/pair/a.conf") || b.read("/etc/pair/a.conf") != "A1\n" || b.exists("/etc/pair/a2.conf") {
		t.Fatal("a group that did not apply moved one of its members")
	}
	if en := b.eng.ledger.Resources["app/a"]; en == nil || en.Path != "/etc/pair/a.conf" {
		t.Fatalf("a's ledger entry %+v", en)
	}

	// The same when the other member is held.
	b.write("/etc/pair/b3.conf", "theirs\n", 0o644)
	rs = b.reconcile(b.decl(mod("app", false, member("a", "/etc/pair/a2.conf", "A1\n"), member("b", "/etc/pair/b3.conf", "B1\n"))))
	rs.want(t, "app/b", hq.StateHeld, false, false)
	if !b.exists("/etc/pair/a.conf") || b.exists("/etc/pair/a2.conf") || !b.exists("/etc/pair/b.conf") {
		t.Fatal("a held group moved one of its members")
	}

	// Once the group applies, the old paths go.
	rs = b.reconcile(b.decl(mod("app", false, member("a", "/etc/pair/a2.conf", "A1\n"), member("b", "/etc/pair/b.conf", "B2\n"))))
	rs.want(t, "app/a", hq.StateApplied, true, true)
	if b.exists("/etc/pair/a.conf") || b.read("/etc/pair/a2.conf") != "A1\n" {
		t.Fatal("the moved member's old path was not removed once its group applied")
	}
	b.noLitter("/etc/pair")
}

func TestGroupThatDoesNotApplyKeepsADroppedMember(t *testing.T) {
	b := setup(t)
	c := member("c", "/etc/pair/c.conf", "C1\n")
	b.reconcile(b.decl(pair("A1\n", "B1\n", c)))

	// c is dropped from the group, b cannot apply: c stays until the group applies.
	rs := b.reconcile(b.decl(pair("A1\n", "bad\n")))
	rs.want(t, "app/b", hq.StateFailed, true, false)
	if !b.exists("/etc/pair/c.conf") {
		t.Fatal("a member dropped from a group that did not apply was removed")
	}
	if b.eng.ledger.Resources["app/c"] == nil {
		t.Fatal("a member dropped from a group that did not apply was forgotten")
	}

	rs = b.reconcile(b.decl(pair("A1\n", "B2\n")))
	rs.want(t, "app/b", hq.StateApplied, true, true)
	if b.exists("/etc/pair/c.conf") || b.eng.ledger.Resources["app/c"] != nil {
		t.Fatal("a member dropped from a group that applied was not removed")
	}

	// A module that no longer has the group removes it at once.
	b.reconcile(b.decl(pair("A1\n", "B2\n", c)))
	b.reconcile(b.decl(mod("app", false, file("a", "/etc/pair/a.conf", "A1\n"))))
	if b.exists("/etc/pair/c.conf") || b.exists("/etc/pair/b.conf") {
		t.Fatal("members of a group no longer declared were not removed")
	}
}

func TestGroupJournalThatCannotBeRemovedKeepsTheOriginals(t *testing.T) {
	b := setup(t)
	b.reconcile(b.decl(pair("A1\n", "B1\n")))
	defer func(prev func(string) error) { removeJournalFile = prev }(removeJournalFile)
	removeJournalFile = func(string) error { return errors.New("injected") }
	d := b.decl(pair("A2\n", "B2\n"))
	rs := b.reconcile(d)
	rs.want(t, "app/a", hq.StateApplied, true, true)
	rs.want(t, "app/b", hq.StateApplied, true, true)
	removeJournalFile = removeDurably

	// The next start finds the journal and rolls the whole group back, not half of it.
	b.restart()
	if a, bb := b.read("/etc/pair/a.conf"), b.read("/etc/pair/b.conf"); a != "A1\n" || bb != "B1\n" {
		t.Fatalf("after recovery: a %q, b %q", a, bb)
	}
	b.noLitter("/etc/pair")
	b.noJournal()
	b.reconcile(d)
	if a, bb := b.read("/etc/pair/a.conf"), b.read("/etc/pair/b.conf"); a != "A2\n" || bb != "B2\n" {
		t.Fatalf("reapplied: a %q, b %q", a, bb)
	}
}

// TestGroupServiceThatTurnsUnhealthyFailsAlone: nothing in the group changed, so a service of
// an applied group whose health check fails is restarted on its own and fails on its own.
func TestGroupServiceThatTurnsUnhealthyFailsAlone(t *testing.T) {
	b := setup(t)
	var hung atomic.Int64
	var all atomic.Bool
	srv := b.hungHealth("app/server", &hung, &all)
	d := b.decl(pair("A1\n", "B1\n", pairService(srv.URL)))
	b.reconcile(d).want(t, "app/server", hq.StateApplied, true, true)
	pid := b.eng.sup.get("app/server").pid

	hung.Store(int64(pid))
	rs := b.reconcile(d)
	rs.want(t, "app/server", hq.StateApplied, true, true)
	rs.want(t, "app/a", hq.StateApplied, true, false)
	rs.want(t, "app/b", hq.StateApplied, true, false)
	b.waitDead(pid)

	all.Store(true)
	rs = b.reconcile(d)
	if r := rs.want(t, "app/server", hq.StateFailed, true, false); !strings.HasPrefix(r.Error, "unhealthy: GET "+srv.URL+": 500") {
		t.Fatalf("server's error %q", r.Error)
	}
	rs.want(t, "app/a", hq.StateApplied, true, false)
	rs.want(t, "app/b", hq.StateApplied, true, false)
	if p := b.eng.sup.get("app/server"); p == nil || !b.eng.sup.running(p) {
		t.Fatal("the server was stopped")
	}
	if a, bb := b.read("/etc/pair/a.conf"), b.read("/etc/pair/b.conf"); a != "A1\n" || bb != "B1\n" {
		t.Fatalf("on disk: a %q, b %q", a, bb)
	}
	b.noLitter("/etc/pair")
	b.noJournal()
}

// A group with a member the controller declared stuck is not attempted again, however long
// it waits, until the operator retries it or a new declaration changes that member; the mark
// outlives a restart of hostd.
func TestStuckGroupWaitsForRetryOrNewSpec(t *testing.T) {
	b := setup(t)
	tries := filepath.Join(t.TempDir(), "tries")
	counted := func(name, path, content string) hq.Resource {
		r := member(name, path, content)
		r.Validate = []string{"/bin/sh", "-c", "echo x >> " + tries + "; ! grep -q bad {path}"}
		return r
	}
	attempts := func() int {
		c, _ := os.ReadFile(tries)
		return strings.Count(string(c), "x")
	}
	group := func(bContent string) hq.DeclaredModule {
		return mod("app", false, counted("a", "/etc/pair/a.conf", "A1\n"), counted("b", "/etc/pair/b.conf", bContent))
	}
	d := b.decl(group("bad\n"))
	b.reconcile(d).want(t, "app/b", hq.StateFailed, true, false)
	b.reconcile(d).want(t, "app/b", hq.StateFailed, true, false) // each reconcile is an hour on
	n := attempts()
	if n == 0 {
		t.Fatal("the group's validates never ran")
	}

	// Only a resource hostd keeps failures for is marked: a's are its culprit's.
	b.eng.MarkStuck("app/a", "app/b")
	b.restart()
	for range 3 {
		rs := b.reconcile(d)
		if r := rs.want(t, "app/b", hq.StateFailed, false, false); !strings.Contains(r.Error, "validate:") || !strings.Contains(r.Error, stuckGroupWait) {
			t.Fatalf("a stuck member reports %q", r.Error)
		}
		if r := rs.want(t, "app/a", hq.StateGroupedPending, false, false); !strings.Contains(r.Error, "app/b stuck") {
			t.Fatalf("a stuck member's partner reports %q", r.Error)
		}
	}
	if got := attempts(); got != n {
		t.Fatalf("a stuck group was checked %d more time(s)", got-n)
	}

	// The operator's retry attempts it once more; it fails and waits out a back-off again.
	b.eng.DropBackoff("app/b")
	b.reconcile(d).want(t, "app/b", hq.StateFailed, true, false)
	if got := attempts(); got == n {
		t.Fatal("a retried stuck group was not attempted")
	}
	b.eng.MarkStuck("app/b")
	b.reconcile(d).want(t, "app/b", hq.StateFailed, false, false)

	// A revision that leaves the member as it was keeps the mark; one that changes it applies.
	d2 := b.decl(group("bad\n"))
	b.reconcile(d2).want(t, "app/b", hq.StateFailed, false, false)
	d3 := b.decl(group("B2\n"))
	rs := b.reconcile(d3)
	rs.want(t, "app/a", hq.StateApplied, true, true)
	rs.want(t, "app/b", hq.StateApplied, true, true)
	if b.read("/etc/pair/b.conf") != "B2\n" {
		t.Fatal("the changed group did not apply")
	}
}
