package e2e

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/authz"
	"github.com/meshhq/hq/internal/testdb"
)

// as sends one request to the controller at base with token, as a browser's form when form is
// set, and returns the status and body.
func as(t *testing.T, base, token, method, path string, body any, form url.Values) (int, string) {
	t.Helper()
	var rd io.Reader
	switch {
	case form != nil:
		rd = strings.NewReader(form.Encode())
	case body != nil:
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, base+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// operatorCLI runs the hq CLI with an operator's token (HQ_TOKEN) and any more environment.
func operatorCLI(t *testing.T, url, token string, env []string, args ...string) string {
	t.Helper()
	cmd := exec.Command(filepath.Join(bin, "hq"), args...)
	cmd.Env = append(append(os.Environ(), "HQ_URL="+url, "HQ_TOKEN="+token, "HQ_CA="+suite.ca.file), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("hq %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// firstToken is the token hq operator add or token printed: its first line.
func firstToken(t *testing.T, out string) string {
	t.Helper()
	tok, _, _ := strings.Cut(out, "\n")
	if !strings.HasPrefix(tok, "hqo_") {
		t.Fatalf("no token in %q", out)
	}
	return tok
}

// fill puts a real object in each {param} of a route, so that what answers is the route.
var routeParams = strings.NewReplacer("{node}", "web-1", "{module}", "web-app", "{placement}", "web", "{rollout}", "1",
	"{resource}", "conf", "{operator}", "dan", "{token}", "1", "{revision}", "1")

var csrfRE = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// TestOperatorsRolesScopesAndAudit: an admin made on the database directly adds a viewer and a
// scoped deployer through the API. The viewer reads every route and page and is refused every
// write; the deployer changes what its scope holds and nothing else; revoked and expired tokens
// are refused at once; and every one of those requests is a row of the audit log, read by the
// API, the CLI, the page and SQL, which refuses to change or delete it.
func TestOperatorsRolesScopesAndAudit(t *testing.T) {
	dbName := testdb.New(t)
	ctl := startController(t, dbName)
	direct := dbEnv(t, dbName)
	alice := firstToken(t, operatorCLI(t, ctl.url, "", direct, "operator", "add", "alice", "--role", "admin", "--db"))
	vera := firstToken(t, operatorCLI(t, ctl.url, alice, nil, "operator", "add", "vera", "--role", "viewer"))
	dan := firstToken(t, operatorCLI(t, ctl.url, alice, nil, "operator", "add", "dan", "--role", "deployer", "--modules", "web-*", "--nodes", "team=web"))
	for _, n := range []struct{ name, team string }{{"web-1", "web"}, {"db-1", "db"}} {
		if st, b := as(t, ctl.url, alice, "POST", "/api/v1/nodes", map[string]any{"name": n.name, "labels": map[string]string{"team": n.team}}, nil); st != 201 {
			t.Fatalf("register %s: %d %s", n.name, st, b)
		}
	}

	// vera reads everything and changes nothing, by the API or from the pages.
	_, home := as(t, ctl.url, vera, "GET", "/", nil, nil)
	csrf := csrfRE.FindStringSubmatch(home)
	if csrf == nil {
		t.Fatalf("no form token on vera's page:\n%s", home)
	}
	writes := 0
	for key, rule := range authz.Table {
		method, pattern, _ := strings.Cut(key, " ")
		path := routeParams.Replace(pattern)
		switch {
		case rule.Need == authz.Read:
			if st, b := as(t, ctl.url, vera, method, path, nil, nil); st == 401 || st == 403 {
				t.Errorf("vera %s %s: %d %s", method, path, st, b)
			}
		case rule.Need == authz.Deploy || rule.Need == authz.Admin:
			var form url.Values
			if !strings.HasPrefix(pattern, "/api/") {
				form = url.Values{"csrf": {csrf[1]}, "revision": {"1"}}
			}
			if st, b := as(t, ctl.url, vera, method, path, map[string]any{}, form); st != 403 {
				t.Errorf("vera %s %s: %d %s, want 403", method, path, st, b)
			}
			writes++
		}
	}

	// dan pushes and places web-app on team=web, and is refused db, team=db, operators, keys and
	// secrets.
	mod := filepath.Join(t.TempDir(), "m.json")
	os.WriteFile(mod, []byte(`{"resources":[{"name":"conf","kind":"file","path":"/etc/web.conf","content":"x\n"}]}`), 0o644)
	if out := operatorCLI(t, ctl.url, dan, nil, "module", "push", "web-app", mod, "-m", "first cut"); !strings.HasPrefix(out, "web-app: revision 1") {
		t.Fatalf("dan's push: %s", out)
	}
	if st, b := as(t, ctl.url, dan, "PUT", "/api/v1/placements/web", map[string]any{"module": "web-app", "selector": "team=web"}, nil); st != 200 {
		t.Fatalf("dan places web-app on team=web: %d %s", st, b)
	}
	refused := []struct {
		method, path string
		body         any
		says         string
	}{
		{"PUT", "/api/v1/modules/db", map[string]any{"resources": []any{}}, "dan may change modules web-* only"},
		{"PUT", "/api/v1/placements/dbs", map[string]any{"module": "web-app", "selector": "team=db"}, "dan may change nodes team=web only"},
		{"POST", "/api/v1/operators", map[string]any{"name": "eve", "role": "admin"}, "dan is a deployer"},
		{"POST", "/api/v1/controller-key/rotate", nil, "dan is a deployer"},
		{"PUT", "/api/v1/secrets/app/db", map[string]any{"value": "not dan's to set"}, "dan is a deployer"},
	}
	for _, r := range refused {
		if st, b := as(t, ctl.url, dan, r.method, r.path, r.body, nil); st != 403 || !strings.Contains(b, r.says) {
			t.Errorf("dan %s %s: %d %s, want 403 saying %q", r.method, r.path, st, b, r.says)
		}
	}

	// A revoked token is refused at once; so is an expired one.
	out := operatorCLI(t, ctl.url, alice, nil, "operator", "token", "dan", "-o", "json")
	var spare hq.NewToken
	if err := json.Unmarshal([]byte(out), &spare); err != nil {
		t.Fatal(err)
	}
	operatorCLI(t, ctl.url, alice, nil, "operator", "revoke", "--token", itoa(spare.ID))
	if st, b := as(t, ctl.url, spare.Token, "PUT", "/api/v1/modules/web-app", map[string]any{"resources": []any{}}, nil); st != 401 || !strings.Contains(b, "revoked") {
		t.Errorf("a revoked token: %d %s", st, b)
	}
	brief := firstToken(t, operatorCLI(t, ctl.url, alice, nil, "operator", "token", "dan", "--expires", "1s"))
	waitFor(t, 10*time.Second, "the short token to expire", func() bool {
		st, _ := as(t, ctl.url, brief, "GET", "/api/v1/status", nil, nil)
		return st == 401
	})
	if st, b := as(t, ctl.url, brief, "PUT", "/api/v1/modules/web-app", map[string]any{"resources": []any{}}, nil); st != 401 || !strings.Contains(b, "expired") {
		t.Errorf("an expired token: %d %s", st, b)
	}

	// The audit log has every one of them, by the API…
	var log struct{ Entries []hq.AuditEntry }
	if st, b := as(t, ctl.url, vera, "GET", "/api/v1/audit?limit=1000", nil, nil); st != 200 || json.Unmarshal([]byte(b), &log) != nil {
		t.Fatalf("audit: %d %s", st, b)
	}
	count := map[string]int{}
	for _, e := range log.Entries {
		count[e.Operator+" "+e.Action+" "+e.Object+" "+itoa(int64(e.Outcome))]++
		if e.Operator == "vera" && e.Outcome != 403 {
			t.Errorf("vera's entry not refused: %+v", e)
		}
	}
	veraRows := 0
	for _, e := range log.Entries {
		if e.Operator == "vera" {
			veraRows++
		}
	}
	if veraRows != writes {
		t.Errorf("vera tried %d writes; the audit log has %d of hers", writes, veraRows)
	}
	for _, want := range []string{
		"dan module.push module/web-app 201", "dan placement.put placement/web 200", "dan module.push module/db 403",
		"dan placement.put placement/dbs 403", "dan operator.add operator 403", "dan key.rotate key/controller 403",
		"dan secret.put secret/app/db 403",
		"dan module.push module/web-app 401", "vera rollout.pause rollout/1 403", "alice operator.add operator/dan 201",
		"local operator.add operator/alice 200",
	} {
		if count[want] == 0 {
			t.Errorf("no audit entry %q in %v", want, count)
		}
	}
	if count["dan module.push module/web-app 401"] != 2 {
		t.Errorf("the revoked and the expired token's pushes: %d entries", count["dan module.push module/web-app 401"])
	}
	for _, e := range log.Entries {
		if e.Operator == "dan" && e.Action == "module.push" && e.Outcome == 201 && (e.Result != 1 || e.Detail != "first cut" || e.Via != "cli") {
			t.Errorf("dan's push: %+v, want revision 1, its message, via cli", e)
		}
	}
	// …by the CLI, the page, and SQL.
	if out := operatorCLI(t, ctl.url, vera, nil, "audit", "--operator", "dan", "--action", "module.push"); !strings.Contains(out, "dan (deployer) via cli") || !strings.Contains(out, "module/db  403") {
		t.Errorf("hq audit:\n%s", out)
	}
	if st, page := as(t, ctl.url, vera, "GET", "/audit?operator=dan", nil, nil); st != 200 || !strings.Contains(page, "module/web-app") || !strings.Contains(page, "dan may change modules web-* only") {
		t.Errorf("the audit page: %d\n%s", st, page)
	}
	raw := openRaw(t, dbName)
	var n int
	if err := raw.QueryRow(testdb.Rebind(`SELECT COUNT(*) FROM audit_log WHERE operator = ? AND outcome = ?`), "vera", 403).Scan(&n); err != nil || n != writes {
		t.Errorf("SQL: %d of vera's refusals (%v), want %d", n, err, writes)
	}
	if _, err := raw.Exec(`UPDATE audit_log SET outcome = 200`); err == nil || !strings.Contains(err.Error(), "append-only") {
		t.Errorf("UPDATE audit_log: %v, want refused", err)
	}
	if _, err := raw.Exec(`DELETE FROM audit_log`); err == nil || !strings.Contains(err.Error(), "append-only") {
		t.Errorf("DELETE FROM audit_log: %v, want refused", err)
	}

	// Authorship: the module's page says who pushed the revision, and why.
	if _, page := as(t, ctl.url, vera, "GET", "/modules/web-app", nil, nil); !strings.Contains(page, "pushed by dan") || !strings.Contains(page, "first cut") {
		t.Errorf("the module page does not say who pushed r1:\n%s", page)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
