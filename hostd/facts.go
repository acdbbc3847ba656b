package hostd

import (
	"bufio"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/meshhq/hq"
)

// hostFacts is what hostd says of the host in its reports until the controller has taken them:
// its own version, the operating system and architecture, and when the host booted.
func hostFacts() *hq.HostFacts {
	return &hq.HostFacts{HostdVersion: hostdVersion(), OS: osName(), Arch: runtime.GOARCH, BootedAt: bootedAt()}
}

// hostdVersion is the build hostd is: see hq.Version.
func hostdVersion() string { return hq.Version() }

// osName is the distribution's own name for itself (os-release's PRETTY_NAME), or the kernel's
// family when it has none.
func osName() string {
	for _, path := range []string{"/etc/os-release", "/usr/lib/os-release"} {
		if name := prettyName(path); name != "" {
			return name
		}
	}
	return runtime.GOOS
}

func prettyName(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "PRETTY_NAME="); ok {
			if u, err := strconv.Unquote(v); err == nil {
				return truncate(u)
			}
			return truncate(strings.Trim(v, `"'`))
		}
	}
	return ""
}

// truncate cuts s to hq.MaxHostFact bytes, dropping a character the cut would split.
func truncate(s string) string {
	if len(s) > hq.MaxHostFact {
		return strings.ToValidUTF8(s[:hq.MaxHostFact], "")
	}
	return s
}

// bootedAt is when the kernel booted (/proc/stat's btime), zero when it cannot be read.
func bootedAt() time.Time {
	f, err := os.Open("/proc/stat")
	if err != nil {
		return time.Time{}
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "btime "); ok {
			if secs, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err == nil {
				return time.Unix(secs, 0).UTC()
			}
		}
	}
	return time.Time{}
}
