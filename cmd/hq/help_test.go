package main

import (
	"bytes"
	"os"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/meshhq/hq/controller"
)

// readVariables is every variable hq reads: those its sources name to getenv, and every one
// of the controller's configuration.
func readVariables(t *testing.T) []string {
	t.Helper()
	files, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	re := regexp.MustCompile(`[gG]etenv\("([A-Z0-9_]+)"\)`)
	for _, f := range files {
		if !strings.HasSuffix(f.Name(), ".go") || strings.HasSuffix(f.Name(), "_test.go") {
			continue
		}
		src, err := os.ReadFile(f.Name())
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range re.FindAllStringSubmatch(string(src), -1) {
			seen[m[1]] = true
		}
	}
	ct := reflect.TypeFor[controller.Config]()
	for i := range ct.NumField() {
		if k := ct.Field(i).Tag.Get("envconfig"); k != "" {
			seen["HQ_"+k] = true
		}
	}
	var keys []string
	for k := range seen {
		keys = append(keys, k)
	}
	if !seen["HQ_URL"] || !seen["HQ_CA"] || !seen["HQ_ADDR"] {
		t.Fatalf("found only %v: the scan is broken", keys)
	}
	return keys
}

func TestUsageNamesEveryVariable(t *testing.T) {
	var b bytes.Buffer
	printUsage(&b)
	for _, k := range readVariables(t) {
		if !regexp.MustCompile(`(?m)^  ` + k + ` `).MatchString(b.String()) {
			t.Errorf("hq -h does not list %s", k)
		}
	}
	for _, c := range commands {
		if !strings.Contains(b.String(), "\n  "+c.name+" ") {
			t.Errorf("hq -h does not list %s", c.name)
		}
	}
}

// hq NAME -h is that command's help alone, with the variables it reads.
func TestCommandHelpIsThatCommandsAlone(t *testing.T) {
	for _, c := range []struct {
		name       string
		has, lacks []string
	}{
		{"serve", []string{"usage: hq serve\n", "HQ_ADDR", "HQ_DB", "HQ_TLS_CERT"}, nil},
		{"demo", []string{"usage: hq demo\n", "HQ_ADDR"}, []string{"HQ_DB ", "HQ_TLS_CERT"}},
		{"migrate", []string{"usage: hq migrate\n", "HQ_DB"}, []string{"HQ_ADDR"}},
		{"key", []string{"usage: hq key [rotate]\n", "HQ_KEY_FILE", "HQ_KEY_GRACE"}, []string{"HQ_ADDR"}},
		{"backup", []string{"usage: hq backup FILE\n", "HQ_DB", "HQ_KEY_FILE"}, []string{"HQ_ADDR", "HQ_KEY_GRACE"}},
	} {
		cmd, ok := commandNamed(c.name)
		if !ok {
			t.Fatalf("no command %s", c.name)
		}
		var b bytes.Buffer
		printCommandHelp(&b, cmd)
		out := b.String()
		for _, other := range commands {
			if other.name != c.name && strings.Contains(out, "usage: hq "+other.name) {
				t.Errorf("hq %s -h shows the usage of %s", c.name, other.name)
			}
		}
		if strings.Contains(out, "operator commands") || strings.Contains(out, "configured via the environment") {
			t.Errorf("hq %s -h is more than its own help:\n%s", c.name, out)
		}
		for _, s := range c.has {
			if !strings.Contains(out, s) {
				t.Errorf("hq %s -h lacks %q:\n%s", c.name, s, out)
			}
		}
		for _, s := range c.lacks {
			if strings.Contains(out, s) {
				t.Errorf("hq %s -h names %q, which it does not read", c.name, s)
			}
		}
	}
	for args, want := range map[string]bool{"-h": true, "rotate -h": true, "--help": true, "help": true, "rotate": false, "": false, "x.db": false} {
		if got := wantsHelp(strings.Fields(args)); got != want {
			t.Errorf("wantsHelp(%q) = %v", args, got)
		}
	}
}
