package controller

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kelseyhightower/envconfig"
)

// The switches back to the standard path take their two values, and refuse any other naming
// the variable.
func TestStandardPathSwitches(t *testing.T) {
	t.Setenv("HQ_ADMIN_TOKEN", "x")
	var cfg Config
	if err := envconfig.Process("HQ", &cfg); err != nil {
		t.Fatal(err)
	}
	if cfg.LongPoll != "lot" || cfg.ReportDecoder != "scanner" || cfg.Check() != nil {
		t.Fatalf("defaults %q %q: %v", cfg.LongPoll, cfg.ReportDecoder, cfg.Check())
	}
	for v, value := range map[string]string{"HQ_LONGPOLL": "handler", "HQ_REPORT_DECODER": "general"} {
		t.Setenv(v, value)
		if err := envconfig.Process("HQ", &cfg); err != nil || cfg.Check() != nil {
			t.Fatalf("%s=%s: %v %v", v, value, err, cfg.Check())
		}
		t.Setenv(v, "fast")
		envconfig.Process("HQ", &cfg)
		if err := cfg.Check(); err == nil || !strings.Contains(err.Error(), v) {
			t.Fatalf("%s=fast: %v", v, err)
		}
		t.Setenv(v, value)
	}
}

// The profiler is served only on the metrics listener, so asking for it without one is refused
// at start, naming both variables.
func TestPprofWantsTheMetricsListener(t *testing.T) {
	t.Setenv("HQ_ADMIN_TOKEN", "x")
	t.Setenv("HQ_PPROF", "1")
	var cfg Config
	if err := envconfig.Process("HQ", &cfg); err != nil {
		t.Fatal(err)
	}
	if err := cfg.Check(); err == nil || !strings.Contains(err.Error(), "HQ_PPROF") || !strings.Contains(err.Error(), "HQ_METRICS_ADDR") {
		t.Fatalf("HQ_PPROF without HQ_METRICS_ADDR: %v", err)
	}
	t.Setenv("HQ_METRICS_ADDR", "127.0.0.1:0")
	if err := envconfig.Process("HQ", &cfg); err != nil || cfg.Check() != nil {
		t.Fatalf("HQ_PPROF with HQ_METRICS_ADDR: %v %v", err, cfg.Check())
	}
}

// Long-polls never take the connections HQ_MAX_CONNS keeps in reserve, whatever HQ_MAX_POLLS
// or the file limit ask: a bound that asks more is clamped, with a log line.
func TestLongPollsLeaveTheReserve(t *testing.T) {
	for _, c := range []struct {
		conns, reserve, polls, want int
		logged                      bool
	}{
		{conns: 30, want: 15, logged: true}, // the file limit's default asks more
		{conns: 30, polls: 100, want: 15, logged: true},
		{conns: 30, polls: 5, want: 5},
		{conns: 30, reserve: 10, polls: 25, want: 20, logged: true},
		{conns: 50000, polls: 60000, want: 45000, logged: true},
		{conns: 50000, polls: 40000, want: 40000},
	} {
		var out strings.Builder
		log := slog.New(slog.NewTextHandler(&out, nil))
		cfg := Config{MaxConns: c.conns, ConnReserve: c.reserve, MaxPolls: c.polls}
		if got := pollBound(cfg, log); got != c.want || strings.Contains(out.String(), "reserve") != c.logged {
			t.Errorf("%+v: %d polls, logged %q; want %d", c, got, out.String(), c.want)
		}
	}
	t.Setenv("HQ_ADMIN_TOKEN", "x")
	t.Setenv("HQ_MAX_CONNS", "30")
	t.Setenv("HQ_CONN_RESERVE", "30")
	var cfg Config
	if err := envconfig.Process("HQ", &cfg); err != nil {
		t.Fatal(err)
	}
	if err := cfg.Check(); err == nil || !strings.Contains(err.Error(), "HQ_CONN_RESERVE") {
		t.Fatalf("a reserve of every connection: %v", err)
	}
}

// The provider's sign-in is checked whole at start: a partial or malformed configuration is
// refused naming the variable, and the secret comes from its file only.
func TestOIDCConfig(t *testing.T) {
	secret := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(secret, []byte("s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	good := map[string]string{"HQ_ADMIN_TOKEN": "x", "HQ_OIDC_ISSUER": "https://id.example", "HQ_OIDC_CLIENT_ID": "hq",
		"HQ_OIDC_CLIENT_SECRET_FILE": secret, "HQ_OIDC_ROLES": "hq-admins=admin,*=viewer"}
	read := func(change map[string]string) Config {
		t.Helper()
		for k, v := range good {
			t.Setenv(k, v)
		}
		for k, v := range change {
			t.Setenv(k, v)
		}
		var cfg Config
		if err := envconfig.Process("HQ", &cfg); err != nil {
			t.Fatal(err)
		}
		return cfg
	}
	cfg := read(nil)
	if err := cfg.Check(); err != nil || cfg.OIDCRoleClaim != "groups" {
		t.Fatalf("a whole configuration: %v, role claim %q", err, cfg.OIDCRoleClaim)
	}
	if o, err := cfg.oidc(slog.Default()); err != nil || o == nil {
		t.Fatalf("building the client: %v", err)
	}
	for _, tc := range []struct {
		change map[string]string
		says   string
	}{
		{map[string]string{"HQ_OIDC_ISSUER": ""}, "need HQ_OIDC_ISSUER"},
		{map[string]string{"HQ_OIDC_ISSUER": "http://id.example"}, "HQ_OIDC_ISSUER"},
		{map[string]string{"HQ_OIDC_CLIENT_ID": ""}, "HQ_OIDC_CLIENT_ID is required"},
		{map[string]string{"HQ_OIDC_CLIENT_SECRET_FILE": ""}, "HQ_OIDC_CLIENT_SECRET_FILE is required"},
		{map[string]string{"HQ_OIDC_ROLES": ""}, "HQ_OIDC_ROLES is required"},
		{map[string]string{"HQ_OIDC_ROLES": "hq-admins=root"}, "HQ_OIDC_ROLES: "},
		{map[string]string{"HQ_OIDC_REDIRECT_URL": "auth/callback"}, "HQ_OIDC_REDIRECT_URL"},
	} {
		if err := read(tc.change).Check(); err == nil || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%v: %v, want %q", tc.change, err, tc.says)
		}
	}
	cfg = read(map[string]string{"HQ_OIDC_CLIENT_SECRET_FILE": secret + ".missing"})
	if _, err := cfg.oidc(slog.Default()); err == nil || !strings.Contains(err.Error(), "HQ_OIDC_CLIENT_SECRET_FILE") {
		t.Errorf("a missing secret file: %v", err)
	}
	empty := filepath.Join(t.TempDir(), "empty")
	os.WriteFile(empty, []byte("\n"), 0o600)
	cfg = read(map[string]string{"HQ_OIDC_CLIENT_SECRET_FILE": empty})
	if _, err := cfg.oidc(slog.Default()); err == nil || !strings.Contains(err.Error(), "secret is empty") {
		t.Errorf("an empty secret file: %v", err)
	}
}
