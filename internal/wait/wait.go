// Package wait holds the tests' one way to wait for something to happen: poll a condition
// until it holds, and fail the test with what was awaited when a deadline passes first.
package wait

import (
	"testing"
	"time"
)

// For polls cond until it holds, and fails t naming what when timeout passes first.
func For(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
