package api

import (
	"syscall"
	"testing"
	"time"
)

// cpuTime is the CPU this process has used, user and system.
func cpuTime(tb testing.TB) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportCPU reports the CPU each operation cost since start: on a machine other work shares,
// it says more than the wall time does.
func reportCPU(b *testing.B, start time.Duration) {
	b.ReportMetric(float64(cpuTime(b)-start)/float64(b.N)/1e6, "cpu-ms/op")
}
