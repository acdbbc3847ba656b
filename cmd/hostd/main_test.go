package main

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

func TestUsage(t *testing.T) {
	for _, args := range [][]string{{"-h"}, {"--help"}, {"run", "-h"}} {
		var out, errOut bytes.Buffer
		if code := run(args, &out, &errOut); code != 0 {
			t.Fatalf("%q: exit %d", args, code)
		}
		for _, v := range []string{"HOSTD_CONTROLLER", "HOSTD_NODE", "HOSTD_TOKEN", "HOSTD_ROOT", "HOSTD_STATE_DIR", "HOSTD_INTERVAL", "HOSTD_WAIT", "HOSTD_CONTROLLER_KEY", "HOSTD_LEARN_KEY", "HOSTD_STOP_SERVICES_ON_EXIT", "--stop-services-on-exit", "/var/lib/hostd", "60s"} {
			if !strings.Contains(out.String(), v) {
				t.Fatalf("%q: usage does not mention %s:\n%s", args, v, out.String())
			}
		}
	}
}

func TestBadArguments(t *testing.T) {
	for _, args := range [][]string{nil, {"serve"}, {"run", "extra"}, {"run", "--stop-services"}, {"run", "--stop-services-on-exit", "x"}} {
		var out, errOut bytes.Buffer
		if code := run(args, &out, &errOut); code != 2 || !strings.Contains(errOut.String(), "Usage: hostd run") {
			t.Fatalf("%q: exit %d, stderr %q", args, code, errOut.String())
		}
	}
}

func TestMissingConfiguration(t *testing.T) {
	t.Setenv("HOSTD_CONTROLLER", "")
	var out, errOut bytes.Buffer
	if code := run([]string{"run"}, &out, &errOut); code != 2 || !strings.Contains(errOut.String(), "HOSTD_CONTROLLER is required") {
		t.Fatalf("exit %d, stderr %q", code, errOut.String())
	}
}

func TestRefusesToStartWithoutAKey(t *testing.T) {
	t.Setenv("HOSTD_CONTROLLER", "http://127.0.0.1:1")
	t.Setenv("HOSTD_NODE", "web-1")
	t.Setenv("HOSTD_TOKEN", "tok")
	t.Setenv("HOSTD_STATE_DIR", t.TempDir())
	for _, k := range []string{"HOSTD_CONTROLLER_KEY", "HOSTD_LEARN_KEY"} {
		t.Setenv(k, "") // restored after the test
		os.Unsetenv(k)
	}
	var out, errOut bytes.Buffer
	if code := run([]string{"run"}, &out, &errOut); code != 2 ||
		!strings.Contains(errOut.String(), "HOSTD_CONTROLLER_KEY is required") || !strings.Contains(errOut.String(), "HOSTD_LEARN_KEY=1") {
		t.Fatalf("exit %d, stderr %q", code, errOut.String())
	}
}

func TestStopServicesOnExit(t *testing.T) {
	t.Setenv("HOSTD_CONTROLLER", "http://127.0.0.1:1")
	t.Setenv("HOSTD_NODE", "web-1")
	t.Setenv("HOSTD_TOKEN", "tok")
	t.Setenv("HOSTD_LEARN_KEY", "1")
	for _, c := range []struct {
		args []string
		env  string
		want bool
	}{
		{[]string{"run"}, "", false},
		{[]string{"run", "--stop-services-on-exit"}, "", true},
		{[]string{"run", "-stop-services-on-exit"}, "", true},
		{[]string{"run"}, "1", true},
		{[]string{"run", "--stop-services-on-exit"}, "0", true},
	} {
		t.Setenv("HOSTD_STOP_SERVICES_ON_EXIT", c.env)
		if c.env == "" {
			os.Unsetenv("HOSTD_STOP_SERVICES_ON_EXIT")
		}
		var out, errOut bytes.Buffer
		cfg, code, ok := configure(c.args, &out, &errOut)
		if !ok || code != 0 || cfg.StopServicesOnExit != c.want {
			t.Errorf("%q with HOSTD_STOP_SERVICES_ON_EXIT=%q: ok %v, exit %d, stop services %v; stderr %q",
				c.args, c.env, ok, code, cfg.StopServicesOnExit, errOut.String())
		}
	}
}
