package hq

import (
	"fmt"
	"strings"
)

// ParseVolume reads a container volume, "HOST:CONTAINER" with an optional ":ro" or ":rw": the
// host path, a path of the module under the node's root held to the rule of every other, and
// the path in the container.
func ParseVolume(v string) (host, target string, readOnly bool, err error) {
	parts := strings.Split(v, ":")
	switch {
	case len(parts) == 3 && parts[2] != "ro" && parts[2] != "rw":
		return "", "", false, fmt.Errorf("the option after the second ':' is \"ro\" or \"rw\", not %q", parts[2])
	case len(parts) != 2 && len(parts) != 3:
		return "", "", false, fmt.Errorf(`must be "HOST:CONTAINER", or "HOST:CONTAINER:ro" to mount it read-only`)
	case !validPath(parts[0]):
		return "", "", false, fmt.Errorf("the host path %q must be absolute and clean (no '..', no trailing '/'), not /: it is under the root like every path of a module", clip(parts[0], 200))
	case !validPath(parts[1]):
		return "", "", false, fmt.Errorf("the container path %q must be absolute and clean (no '..', no trailing '/'), not /", clip(parts[1], 200))
	}
	return parts[0], parts[1], len(parts) == 3 && parts[2] == "ro", nil
}
