// Package testenv is how a test says it needs something of the machine: outside CI a machine
// that lacks it skips the test and says what is missing; in CI (CI set) the test fails, since
// .ci/run installs everything the tests need.
package testenv

import (
	"fmt"
	"os"
	"os/exec"
	"testing"
)

// Need skips (outside CI) or fails (in CI) t when a command is not on the PATH.
func Need(t testing.TB, commands ...string) {
	t.Helper()
	for _, c := range commands {
		if _, err := exec.LookPath(c); err != nil {
			Missing(t, "%s is not installed", c)
		}
	}
}

// Missing skips (outside CI) or fails (in CI) t, saying what is missing.
func Missing(t testing.TB, format string, args ...any) {
	t.Helper()
	what := fmt.Sprintf(format, args...)
	if os.Getenv("CI") != "" {
		t.Fatalf("%s; .ci/run installs what the tests need", what)
	}
	t.Skipf("%s; skipped outside CI", what)
}
