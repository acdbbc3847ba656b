package e2e

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"io"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/internal/podmantest"
	"github.com/meshhq/hq/internal/testdb"
)

// A secret reaches the one process that uses it and no other surface: after converging, its
// value is in the file declared with it (mode 0600), a container's variable, a mounted file
// and a service's environment, and nowhere else: not the database or its log, not a backup,
// not an answer of the API, a page, /metrics, a container's labels or the mounted one's
// inspect, hostd's state dir, or either log. A node whose modules do not use it gets nothing.
func TestSecretsReachOnlyTheirPlaces(t *testing.T) {
	sqliteOnly(t, "the database file and its log are read byte for byte")
	env := podmantest.New(t)
	dbPath := testdb.New(t)
	ctl := startController(t, dbPath)
	c := newClient(t, ctl.url)
	h1 := newHost(t, c, ctl.url, "web-1", env.Vars...)
	newHost(t, c, ctl.url, "web-2", env.Vars...)
	token2 := c.register("web-3") // a node with a token of its own, reading its own declaration

	marker := "mk" + randomHex(t)
	c.call("PUT", "/secrets/app/db", map[string]string{"value": marker}, nil)
	status, body := c.raw("PUT", "/secrets/app/db", map[string]string{"value": "x", "value_base64": "eA=="})
	if status != http.StatusUnprocessableEntity || bytes.Contains(body, []byte(marker)) {
		t.Fatalf("a body with both values: %d %s", status, body)
	}
	sleep := []string{"sleep", "3600"}
	c.putModule("app",
		hq.Resource{Name: "conf", Kind: hq.KindFile, Path: "/etc/app/db.conf", Content: "password={{.Secrets.app_db}}\n"},
		hq.Resource{Name: "envd", Kind: hq.KindContainer, Image: env.Image, Command: sleep, SecretEnv: map[string]string{"DB_PASSWORD": "app/db"}},
		hq.Resource{Name: "mounted", Kind: hq.KindContainer, Image: env.Image, Command: sleep,
			Secrets: []hq.SecretFile{{Name: "app/db", Target: "/run/secrets/db", Mode: "0400"}}},
		hq.Resource{Name: "svc", Kind: hq.KindService, Command: []string{"/bin/sh", "-c", `printf %s "$DB_PASSWORD" > {root}/svc.env; exec sleep 3600`},
			SecretEnv: map[string]string{"DB_PASSWORD": "app/db"}},
	)
	c.putModule("other", hq.Resource{Name: "plain", Kind: hq.KindFile, Path: "/etc/plain", Content: "plain\n"})
	gen := c.assign("web-1", "app", true)
	gen2 := c.assign("web-2", "other", true)
	c.assign("web-3", "other", true)
	convergedAt(t, c, "web-1", gen, "web-1 converged with its secrets")
	convergedAt(t, c, "web-2", gen2, "web-2 converged")

	// Where it must be.
	conf := filepath.Join(h1.root, "etc/app/db.conf")
	if got := readFile(conf); got != "password="+marker+"\n" {
		t.Fatalf("the file holds %q", got)
	}
	if fi, err := os.Stat(conf); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the file's mode: %v %v", fi.Mode(), err)
	}
	if got := strings.TrimSpace(env.Podman("exec", "hq-app-envd", "sh", "-c", `printf %s "$DB_PASSWORD"`)); got != marker {
		t.Fatalf("the container's variable is %q", got)
	}
	if got := env.Podman("exec", "hq-app-mounted", "cat", "/run/secrets/db"); got != marker {
		t.Fatalf("the mounted file holds %q", got)
	}
	waitFor(t, 20*time.Second, "the service to write its environment", func() bool {
		return readFile(filepath.Join(h1.root, "svc.env")) == marker
	})

	// Where it must not be.
	places := map[string][]byte{}
	for _, p := range []string{dbPath, dbPath + "-wal"} {
		places[p], _ = os.ReadFile(p)
	}
	backup := filepath.Join(t.TempDir(), "backup.db")
	cmd := exec.Command(filepath.Join(bin, "hq"), "backup", backup)
	cmd.Env = append(os.Environ(), "HQ_DB="+dbPath)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("hq backup: %v\n%s", err, out)
	}
	places["backup"], _ = os.ReadFile(backup)
	for _, p := range []string{"/modules", "/modules/app", "/nodes", "/nodes/web-1", "/nodes/web-1/sends", "/nodes/web-1/reports",
		"/nodes/web-1/transitions", "/nodes/web-1/drifts", "/nodes/web-1/declaration", "/secrets", "/secrets/app/db", "/status"} {
		_, places["api "+p] = c.raw("GET", p, nil)
	}
	_, places["plan of a new version"] = c.raw("PUT", "/secrets/app/db?dry_run=true", map[string]string{"value": "other"})
	for _, p := range []string{"/", "/nodes/web-1", "/modules", "/modules/app", "/modules/app/revisions/1", "/modules/app/diff", "/secrets", "/metrics"} {
		places["page "+p] = get(t, ctl.url+p)
	}
	for _, ctr := range []string{"hq-app-envd", "hq-app-mounted"} {
		places["labels of "+ctr] = []byte(env.Podman("inspect", "--format", "{{json .Config.Labels}}", ctr))
	}
	places["inspect of hq-app-mounted"] = []byte(env.Podman("inspect", "hq-app-mounted"))
	filepath.WalkDir(h1.state, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			places["state "+p], _ = os.ReadFile(p)
		}
		return nil
	})
	places["controller's log"] = []byte(ctl.out.String())
	places["hostd's log"] = []byte(h1.out.String())
	for where, b := range places {
		if bytes.Contains(b, []byte(marker)) {
			t.Errorf("the value is in %s", where)
		}
	}
	if !bytes.Contains(places["api /secrets/app/db"], []byte(`"sha256:`)) {
		t.Errorf("the secret's answer shows no digest: %s", places["api /secrets/app/db"])
	}

	// A node whose modules do not use it receives nothing of it, read with its own token.
	req, _ := http.NewRequest("GET", ctl.url+"/api/v1/nodes/web-3/declaration", nil)
	req.Header.Set("Authorization", "Bearer "+token2)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var d hq.Declaration
	if err := json.NewDecoder(resp.Body).Decode(&d); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("web-3's declaration: %d %v", resp.StatusCode, err)
	}
	if len(d.Secrets) > 0 || d.Node != "web-3" {
		t.Fatalf("web-3 received secrets %v", d.Secrets)
	}
	// What web-1 received holds its value sealed, and nothing in the clear.
	var d1 hq.Declaration
	c.call("GET", "/nodes/web-1/declaration", nil, &d1)
	if sealed := d1.Secrets["app/db@1"]; !strings.HasPrefix(sealed, "-----BEGIN AGE ENCRYPTED FILE-----") {
		t.Fatalf("web-1's declaration carries %q for app/db@1", sealed)
	}
}

// get reads a page or /metrics as the operator.
func get(t *testing.T, url string) []byte {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	req.Header.Set("Authorization", "Bearer "+adminToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return b
}

func randomHex(t *testing.T) string {
	b := make([]byte, 12)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}
