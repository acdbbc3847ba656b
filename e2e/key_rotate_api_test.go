package e2e

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/internal/testdb"
)

// An admin rotates the signing key by the API: the answer names a new key, the controller
// serves that key within seconds, and the audit log has the rotation as hers, with the new
// key's fingerprint.
func TestAdminRotatesTheKeyByTheAPI(t *testing.T) {
	dbName := testdb.New(t)
	ctl := startController(t, dbName)
	alice := firstToken(t, operatorCLI(t, ctl.url, "", dbEnv(t, dbName), "operator", "add", "alice", "--role", "admin", "--db"))
	first := fingerprint(t, controllerKey(t, ctl.url))

	st, body := as(t, ctl.url, alice, "POST", "/api/v1/controller-key/rotate", nil, nil)
	var rotated struct{ Fingerprint string }
	if st != 200 || json.Unmarshal([]byte(body), &rotated) != nil || rotated.Fingerprint == "" {
		t.Fatalf("alice rotates the key: %d %s", st, body)
	}
	if rotated.Fingerprint == first {
		t.Fatalf("the rotation answers the old key %s", first)
	}
	waitFor(t, 20*time.Second, "GET /api/v1/controller-key to answer the new key "+rotated.Fingerprint, func() bool {
		return fingerprint(t, controllerKey(t, ctl.url)) == rotated.Fingerprint
	})

	var log struct{ Entries []hq.AuditEntry }
	if st, b := as(t, ctl.url, alice, "GET", "/api/v1/audit?action=key.rotate", nil, nil); st != 200 || json.Unmarshal([]byte(b), &log) != nil {
		t.Fatalf("audit: %d %s", st, b)
	}
	if len(log.Entries) != 1 {
		t.Fatalf("%d key.rotate entries, want 1: %+v", len(log.Entries), log.Entries)
	}
	e := log.Entries[0]
	if e.Operator != "alice" || e.Role != hq.RoleAdmin || e.Via != hq.ViaAPI || e.Object != "key/controller" ||
		e.Outcome != 200 || e.Detail != "new key "+rotated.Fingerprint {
		t.Errorf("the rotation's audit entry: %+v", e)
	}
}
