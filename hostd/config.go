package hostd

import (
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
	"time"
)

// Config is hostd's configuration, read from HOSTD_* variables by the main.
type Config struct {
	Controller    string        `envconfig:"CONTROLLER" desc:"required: base URL of the controller, e.g. https://hq.example:8080; several, comma-separated, are controllers on one database, tried in turn when one does not answer"`
	Node          string        `envconfig:"NODE" desc:"required: this node's registered name"`
	Token         string        `envconfig:"TOKEN" desc:"required: this node's token"`
	Root          string        `envconfig:"ROOT" default:"/" desc:"directory every declared path lives under"`
	StateDir      string        `envconfig:"STATE_DIR" default:"/var/lib/hostd" desc:"where the ledger, the last declaration and service logs are kept"`
	Interval      time.Duration `envconfig:"INTERVAL" default:"60s" desc:"time between reconciles"`
	Wait          time.Duration `envconfig:"WAIT" default:"30s" desc:"how long one long-poll for a new declaration waits"`
	ControllerKey string        `envconfig:"CONTROLLER_KEY" desc:"base64 ed25519 public key every declaration must be signed with (GET /api/v1/controller-key on the controller serves it), or vouched for from through hq key rotate; a key adopted that way is kept in the state dir and held after a restart, unless this names a key outside its chain; required unless HOSTD_LEARN_KEY=1"`
	LearnKey      bool          `envconfig:"LEARN_KEY" desc:"1: without HOSTD_CONTROLLER_KEY, learn the key from the controller on first contact, log its fingerprint and keep it in the state dir; a declaration signed with another key is refused from then on"`
	// StopServicesOnExit is also set by hostd run --stop-services-on-exit.
	StopServicesOnExit bool `envconfig:"STOP_SERVICES_ON_EXIT" desc:"1: stop every service when hostd exits (as hostd run --stop-services-on-exit does), for taking a node out of service; by default services keep running across a restart of hostd and are re-adopted"`

	CA                     string        `envconfig:"CA" desc:"a PEM bundle the controller's HTTPS certificate must chain to; the system's roots when empty"`
	Cert                   string        `envconfig:"CERT" desc:"a PEM client certificate naming this node, for a controller that asks for one (HQ_CLIENT_CA)"`
	Key                    string        `envconfig:"KEY" desc:"its PEM private key"`
	ContainerCLI           string        `envconfig:"CONTAINER_CLI" desc:"the container CLI that runs container and job resources: podman (the default, from the PATH) or a Docker-compatible one; it gets hostd's environment, so CONTAINERS_CONF and CONTAINERS_REGISTRIES_CONF reach it"`
	ContainerNetworkPrefix string        `envconfig:"CONTAINER_NETWORK_PREFIX" default:"hq-" desc:"the start of the name of the network hostd makes for each module's containers (hq-<module>); another prefix keeps apart two hostds that share one container engine"`
	ImageGCAfter           time.Duration `envconfig:"IMAGE_GC_AFTER" default:"24h" desc:"remove an image hostd brought once no declared container or job of this node has used it for this long (looked at once an hour); 0 removes none"`
	MetricsFile            string        `envconfig:"METRICS_FILE" desc:"write the figures of every reconcile here for node_exporter's textfile collector (e.g. /var/lib/node_exporter/textfile/hostd.prom), atomically"`
}

// Controllers are the URLs HOSTD_CONTROLLER lists, in order.
func (c Config) Controllers() []string {
	var bases []string
	for b := range strings.SplitSeq(c.Controller, ",") {
		if b = strings.TrimSpace(b); b != "" {
			bases = append(bases, b)
		}
	}
	return bases
}

// Check reports the first thing in c that would stop hostd from running.
func (c Config) Check() error {
	switch {
	case c.Controller == "":
		return errors.New("HOSTD_CONTROLLER is required")
	case c.Node == "":
		return errors.New("HOSTD_NODE is required")
	case c.Token == "":
		return errors.New("HOSTD_TOKEN is required")
	case c.Root == "" || !filepath.IsAbs(c.Root):
		return fmt.Errorf("HOSTD_ROOT must be an absolute path, not %q", c.Root)
	case c.StateDir == "" || !filepath.IsAbs(c.StateDir):
		return fmt.Errorf("HOSTD_STATE_DIR must be an absolute path, not %q", c.StateDir)
	case c.Interval <= 0:
		return errors.New("HOSTD_INTERVAL must be positive")
	case c.Wait <= 0:
		return errors.New("HOSTD_WAIT must be positive")
	case c.ImageGCAfter < 0:
		return fmt.Errorf("HOSTD_IMAGE_GC_AFTER must be 0 (remove no image) or positive, not %s", c.ImageGCAfter)
	}
	for _, base := range c.Controllers() {
		u, err := url.Parse(base)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("HOSTD_CONTROLLER must be http:// or https:// URLs, comma-separated, not %q", base)
		}
		if u.Scheme == "http" && (c.CA != "" || c.Cert != "" || c.Key != "") {
			// Plain HTTP would verify nothing and offer nothing: a CA or a certificate given
			// with it is a mistake to name, not to ignore.
			return fmt.Errorf("HOSTD_CA, HOSTD_CERT and HOSTD_KEY are for a controller reached over HTTPS, and HOSTD_CONTROLLER names %s", base)
		}
	}
	if c.ControllerKey == "" && !c.LearnKey {
		return errNoKeyConfigured
	}
	if c.ControllerKey != "" {
		if _, err := parseKey(c.ControllerKey); err != nil {
			return fmt.Errorf("HOSTD_CONTROLLER_KEY: %w", err)
		}
	}
	return nil
}
