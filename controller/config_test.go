package controller

import (
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
