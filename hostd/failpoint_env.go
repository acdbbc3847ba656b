//go:build hostd_failpoints

package hostd

import (
	"os"
	"time"
)

// failpointGroupCommitPauseFromEnv reads HOSTD_FAILPOINT_GROUP_COMMIT_PAUSE, and
// failpointAtFromEnv HOSTD_FAILPOINT_AT, in a hostd built for the end-to-end tests only (go
// build -tags hostd_failpoints): they kill hostd while a group is half committed, from another
// process.
func failpointGroupCommitPauseFromEnv() time.Duration {
	d, _ := time.ParseDuration(os.Getenv("HOSTD_FAILPOINT_GROUP_COMMIT_PAUSE"))
	return d
}

func failpointAtFromEnv() string { return os.Getenv("HOSTD_FAILPOINT_AT") }
