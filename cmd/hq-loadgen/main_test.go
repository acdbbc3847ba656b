package main

import (
	"bytes"
	"slices"
	"strings"
	"testing"
)

// The controllers' flags are checked before anything starts or is sent: the lists must agree,
// and several controllers cannot share one fixed port.
func TestControllerFlagsMustAgree(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-url", "http://a,http://b", "-token", "t", "-pid", "12"}, "-pid lists 1 process(es) for 2 -url(s)"},
		{[]string{"-url", "http://a,http://b", "-token", "t", "-pid", "12,x"}, `-pid: "x" is not a process id`},
		{[]string{"-url", "http://a,http://b", "-token", "t", "-controllers", "3"}, "-controllers 3 but -url lists 2"},
		{[]string{"-hq", "/nonexistent/hq", "-controllers", "2", "-addr", "127.0.0.1:8080"}, "give port 0 or one address each"},
		{[]string{"-hq", "/nonexistent/hq", "-controllers", "3", "-addr", "127.0.0.1:8080,127.0.0.1:8081"}, "-addr lists 2 address(es) for 3 controller(s)"},
		{[]string{"-hq", "/nonexistent/hq", "-controllers", "0"}, "-controllers must be at least 1"},
		{[]string{"-hq", "/nonexistent/hq", "-pid", "12"}, "-pid goes with -url"},
	} {
		var stdout, stderr bytes.Buffer
		if code := run(c.args, &stdout, &stderr); code != 1 || !strings.Contains(stderr.String(), c.want) {
			t.Errorf("%q: exit %d, %q; want 1 and %q", c.args, code, stderr.String(), c.want)
		}
	}
}

func TestList(t *testing.T) {
	if got := list(" http://a , ,http://b,"); !slices.Equal(got, []string{"http://a", "http://b"}) {
		t.Errorf("%q", got)
	}
	if got := list(""); len(got) != 0 {
		t.Errorf("%q", got)
	}
}
