package e2e

import (
	"encoding/json"
	"github.com/meshhq/hq/internal/testdb"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// controllerKey fetches the signing key the controller at url publishes, as an operator
// provisioning a host would, for HOSTD_CONTROLLER_KEY.
func controllerKey(t testing.TB, url string) string {
	t.Helper()
	resp, err := http.Get(url + "/api/v1/controller-key")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var k struct {
		Key string `json:"key"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&k); err != nil || resp.StatusCode != http.StatusOK || k.Key == "" {
		t.Fatalf("GET %s/api/v1/controller-key: %s, %v", url, resp.Status, err)
	}
	return k.Key
}

// hq key prints the key the controller signs with, the one it publishes.
func TestHqKeyPrintsTheSigningKey(t *testing.T) {
	path := testdb.New(t)
	ctl := startController(t, path)
	cmd := exec.Command(filepath.Join(bin, "hq"), "key")
	cmd.Env = append(os.Environ(), dbEnv(t, path)...)
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.TrimSpace(string(out)), controllerKey(t, ctl.url); got != want {
		t.Fatalf("hq key printed %q, the controller publishes %q", got, want)
	}
}
