package db

import (
	"context"
	"testing"
	"time"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/internal/testdb"
)

// beforeSessionVia is a session an hq from before web_sessions.via wrote: an operator's,
// opened with the form.
var beforeSessionVia = `INSERT INTO web_sessions (id_hash, created_at, expires_at, operator, role, token_id)
VALUES ('` + hashToken("old-session") + `', '2026-11-01T00:00:00.000Z', '2999-01-01T00:00:00.000Z', 'admin', 'admin', 0)`

// checkBeforeSessionVia: the old session reads as the form's, a provider's session reads back
// as the provider's, and a via the column does not know is refused.
func checkBeforeSessionVia(t *testing.T, s *Store) {
	t.Helper()
	ctx := context.Background()
	id, ok, err := s.Session(ctx, "old-session")
	if err != nil || !ok || id.Operator != hq.BootstrapAdmin || id.SignIn != hq.SignInToken {
		t.Fatalf("an old session after migrating: %+v %v %v", id, ok, err)
	}
	alice := hq.Identity{Operator: "alice", Role: hq.RoleDeployer, SignIn: hq.SignInOIDC}
	if err := s.CreateSession(ctx, "alice-session", time.Now().Add(time.Hour), alice); err != nil {
		t.Fatal(err)
	}
	id, ok, err = s.Session(ctx, "alice-session")
	if err != nil || !ok || id != alice {
		t.Fatalf("a provider's session: %+v %v %v, want %+v", id, ok, err, alice)
	}
	bad := hq.Identity{Operator: "eve", Role: hq.RoleAdmin, SignIn: "saml"}
	if err := s.CreateSession(ctx, "eve-session", time.Now().Add(time.Hour), bad); err == nil {
		t.Fatal("a session via saml was stored")
	}
}

func TestMigrateToSessionViaKeepsSessions(t *testing.T) {
	path, old := databaseAt(t, 20)
	if _, err := old.Exec(beforeSessionVia); err != nil {
		t.Fatal(err)
	}
	old.Close()
	checkBeforeSessionVia(t, open(t, path, Options{}))
}

func TestPostgresMigrateToSessionViaKeepsSessions(t *testing.T) {
	testdb.NeedServer(t)
	url := testdb.NewOn(t, "postgres")
	old := postgresAt(t, url, 16)
	if _, err := old.Exec(beforeSessionVia); err != nil {
		t.Fatal(err)
	}
	old.Close()
	checkBeforeSessionVia(t, open(t, url, Options{}))
}
