//go:build !hostd_failpoints

package hostd

import "time"

// failpointGroupCommitPauseFromEnv is zero, and failpointAtFromEnv empty: a hostd built as it
// ships has no failpoint an environment could switch on.
func failpointGroupCommitPauseFromEnv() time.Duration { return 0 }

func failpointAtFromEnv() string { return "" }
