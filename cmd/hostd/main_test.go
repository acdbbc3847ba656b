package main

import (
	"bytes"
	"os"
	"path/filepath"
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

func TestApplyUsageAndExitCodes(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run([]string{"-h"}, &out, &errOut); code != 0 || !strings.Contains(out.String(), "hostd apply [--module NAME] [--take] FILE") || !strings.Contains(out.String(), "6 when both") {
		t.Fatalf("usage does not document apply:\n%s", out.String())
	}
	for _, args := range [][]string{{"apply"}, {"apply", "a", "b"}, {"apply", "--bogus", "a"}} {
		out.Reset()
		errOut.Reset()
		if code := run(args, &out, &errOut); code != 1 || !strings.Contains(errOut.String(), "Usage:") {
			t.Errorf("%q: exit %d, stderr %q", args, code, errOut.String())
		}
	}
	dir := t.TempDir()
	t.Setenv("HOSTD_ROOT", filepath.Join(dir, "root"))
	t.Setenv("HOSTD_STATE_DIR", filepath.Join(dir, "state"))
	file := filepath.Join(dir, "web.json")
	write := func(s string) {
		if err := os.WriteFile(file, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		module string
		code   int
		out    string
	}{
		{`{"resources":[{"name":"a","kind":"file","path":"/a","content":"1"}]}`, 2, "changed web/a\napplied 1 resource(s)\n"},
		{`{"resources":[{"name":"a","kind":"file","path":"/a","content":"1"}]}`, 0, "applied 1 resource(s)\n"},
		{`{"resources":[{"name":"a","kind":"file","path":"/a","content":"2","validate":["false"]}]}`, 4, "failed web/a: validate: exit status 1\napplied 0 resource(s), 1 failed\n"},
		{`{"resources":[{"name":"a","kind":"nope"}]}`, 1, ""},
	} {
		write(c.module)
		out.Reset()
		errOut.Reset()
		if code := run([]string{"apply", file}, &out, &errOut); code != c.code || out.String() != c.out {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want %d, %q", c.module, code, out.String(), errOut.String(), c.code, c.out)
		}
	}
}

func TestVersion(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run([]string{"--version"}, &out, &errOut); code != 0 {
		t.Fatalf("--version: exit %d: %s", code, errOut.String())
	}
	if got := out.String(); !strings.HasPrefix(got, "hostd ") || strings.TrimSpace(got) == "hostd" {
		t.Fatalf("--version printed %q, want hostd and its version", got)
	}
}
