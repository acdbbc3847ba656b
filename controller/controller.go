// Package controller wires hq's controller together: it opens the store, loads the signing key,
// and serves the API and the status pages side by side over the one store.
package controller

import (
	"cmp"
	"context"
	"crypto/rand"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"

	"github.com/meshhq/hq/api"
	"github.com/meshhq/hq/api/longpoll"
	"github.com/meshhq/hq/db"
	_ "github.com/meshhq/hq/db/postgres" // the engines HQ_DB may name
	_ "github.com/meshhq/hq/db/sqlite"
	"github.com/meshhq/hq/internal/guesses"
	"github.com/meshhq/hq/internal/workers"
	"github.com/meshhq/hq/keys"
	"github.com/meshhq/hq/seal"
	"github.com/meshhq/hq/webui"
)

// Config is the controller's configuration, read from the environment.
type Config struct {
	Addr               string        `envconfig:"ADDR" default:"127.0.0.1:8080" desc:"where the API and the status pages listen"`
	DB                 string        `envconfig:"DB" default:"./hq.db" desc:"the database: a SQLite file (its signing key kept beside it as FILE.key), or a postgres:// URL"`
	AdminToken         string        `envconfig:"ADMIN_TOKEN" desc:"a bootstrap admin's bearer token, named admin; unset it once a real admin exists (hq operator add NAME --role admin)"`
	AuditRetain        time.Duration `envconfig:"AUDIT_RETAIN" default:"8760h" desc:"audit log entries older than this are pruned (the only way a row leaves it)"`
	StuckAttempts      int           `envconfig:"STUCK_ATTEMPTS" default:"5" desc:"consecutive failed attempts before a resource is stuck"`
	StuckAfter         time.Duration `envconfig:"STUCK_AFTER" default:"30m" desc:"or this long failing"`
	SilentAfter        time.Duration `envconfig:"SILENT_AFTER" default:"3m" desc:"a node without a report for this long is silent"`
	DriftThreshold     int           `envconfig:"DRIFT_THRESHOLD" default:"3" desc:"put-backs of one resource within an hour that give its node a drift line"`
	Retain             time.Duration `envconfig:"RETAIN" default:"720h" desc:"history (transitions, reports, sends, drifts) older than this is pruned, keeping each node's newest 100 rows per table"`
	PruneEvery         time.Duration `envconfig:"PRUNE_EVERY" default:"10m" desc:"how often history is pruned"`
	Lease              time.Duration `envconfig:"LEASE" default:"15s" desc:"of controllers sharing a database, one at a time runs the mover, the rollouts and the pruner; another takes them over within this long after it dies"`
	MaxReportsInFlight int           `envconfig:"MAX_REPORTS_IN_FLIGHT" default:"256" desc:"reports taken in at once; past it a report is answered 503 with Retry-After before its body is read"`
	Pacing             bool          `envconfig:"PACING" default:"true" desc:"a long-poll's new declaration waits while the reports in flight fill half of HQ_MAX_REPORTS_IN_FLIGHT (the polls ending soonest first, none more than 15 s past its wait), so a new revision's wave of reports is taken in rather than turned away; false answers at once"`
	CommitWait         time.Duration `envconfig:"COMMIT_WAIT" default:"2ms" desc:"when reports arrive less than this apart, one that finds the writer free waits up to this long for more to share its commit (a sync of the log, on PostgreSQL a round trip and one statement); 0 commits each batch at once"`
	ReportsPerNode     int           `envconfig:"REPORTS_PER_NODE" default:"2" desc:"reports of one node taken in at once (each at most 8 MiB); past it its report is answered 503 with Retry-After before its body is read, so one node's slow or large bodies leave room for the others"`
	NodeReportRate     float64       `envconfig:"NODE_REPORT_RATE" default:"2" desc:"reports a second one node may send, on average (a host reports once an interval, at once on a new declaration, and retries after a second or more); past it, and its burst, a report is answered 429 with Retry-After and stores nothing; 0 turns the bound off"`
	NodeReportBurst    int           `envconfig:"NODE_REPORT_BURST" default:"20" desc:"reports one node may send at once beyond HQ_NODE_REPORT_RATE before it is held to that rate"`
	AuthFailures       int           `envconfig:"AUTH_FAILURES" default:"30" desc:"tokens that are nobody's (API bearer tokens, sign-ins to the pages) one source address may send a minute, and at once; past it the address is answered 429 with Retry-After before its token is looked at; 0 turns the bound off"`
	RetryAfter         int           `envconfig:"RETRY_AFTER" default:"5" desc:"the least a client turned away with 503 is told to wait, in seconds (jittered up to twice that)"`
	TLSCert            string        `envconfig:"TLS_CERT" desc:"a PEM certificate (chain) to serve HTTPS with, and only HTTPS; reloaded when the file changes"`
	TLSKey             string        `envconfig:"TLS_KEY" desc:"its PEM private key"`
	ClientCA           string        `envconfig:"CLIENT_CA" desc:"a PEM bundle: node calls must then carry a client certificate from it naming the node (common name or DNS SAN), besides the node's token"`
	// MaxConns is sized for a fleet: every node holds one connection open for its long-poll.
	// LongPoll and ReportDecoder turn hq's own protocol code off, back to the standard path.
	LongPoll      string `envconfig:"LONGPOLL" default:"lot" desc:"lot: a long-poll that waits is set aside without a goroutine (about 1 KB a waiting host); handler: it waits in its handler, as net/http serves any request (about 36 KB), to rule the lot out"`
	ReportDecoder string `envconfig:"REPORT_DECODER" default:"scanner" desc:"scanner: a report in hostd's shape is read by hq's own scanner (half the CPU), any other by encoding/json, and results that repeat the node's last ones byte for byte are not read again; general: every report read whole by encoding/json, to rule both out"`
	MaxConns      int    `envconfig:"MAX_CONNS" default:"50000" desc:"connections served at once; more wait in the listen backlog"`
	MaxPolls      int    `envconfig:"MAX_POLLS" desc:"long-polls that wait at once; past it a poll is answered at once with Retry-After and its host polls on its interval instead (default: three quarters of the files the process may open); never more than HQ_MAX_CONNS less HQ_CONN_RESERVE"`
	ConnReserve   int    `envconfig:"CONN_RESERVE" desc:"of HQ_MAX_CONNS, connections long-polls may never take: kept for reports, operators and /healthz (default: a tenth of HQ_MAX_CONNS, and at least half of it up to 64)"`
	PollsPerNode  int    `envconfig:"POLLS_PER_NODE" default:"2" desc:"long-polls of one node that wait at once; a newer one takes the oldest's place, which is answered at once (304 with Retry-After)"`
	MetricsAddr   string `envconfig:"METRICS_ADDR" desc:"serve GET /metrics here without auth (for a scraper without the token); unset, it is served beside the API to the operator"`
	Pprof         bool   `envconfig:"PPROF" desc:"also serve Go's profiler (/debug/pprof/) on HQ_METRICS_ADDR's listener, which has no auth: bind it to loopback"`
	// The pages' sign-in through an OpenID Connect provider, beside the token (webui/oidc.go).
	OIDCIssuer           string `envconfig:"OIDC_ISSUER" desc:"sign people in to the pages through this OpenID Connect issuer (https://…; http only on loopback), beside the token form"`
	OIDCClientID         string `envconfig:"OIDC_CLIENT_ID" desc:"hq's client id at the issuer (required with HQ_OIDC_ISSUER)"`
	OIDCClientSecretFile string `envconfig:"OIDC_CLIENT_SECRET_FILE" desc:"a file holding the client's secret (required with HQ_OIDC_ISSUER; never the secret itself in the environment)"`
	OIDCRoleClaim        string `envconfig:"OIDC_ROLE_CLAIM" default:"groups" desc:"the ID token's claim, a string or a list of strings, that HQ_OIDC_ROLES maps to roles"`
	OIDCRoles            string `envconfig:"OIDC_ROLES" desc:"claim values to roles, e.g. hq-admins=admin,hq-deployers=deployer,*=viewer; the strongest match wins, * is anyone else, and without it no match is refused (required with HQ_OIDC_ISSUER)"`
	OIDCRedirectURL      string `envconfig:"OIDC_REDIRECT_URL" desc:"where the issuer sends the browser back, as registered there (default: https://HOST/auth/callback, HOST as the browser asked for the page)"`
	// KeyFile's default is computed in one place, SigningKeyFile.
	KeyFile string `envconfig:"KEY_FILE" desc:"the signing key file (mode 0600; hq key rotate replaces it); by default HQ_DB.key, beside the database file, and required when HQ_DB is not a file"`
	// SecretsKeyFile's default is computed in one place, SecretsKeyPath.
	SecretsKeyFile string `envconfig:"SECRETS_KEY_FILE" desc:"the age key (mode 0600) every secret version is encrypted to in the database; by default HQ_DB.secrets.key, beside the database file, and required when HQ_DB is not a file; back it up apart from the database: without it the secrets are lost"`
	// KeyGrace is a week by default: long enough for a host that was powered off over a long
	// weekend or a holiday, or a laptop away on a trip, to follow a rotation when it comes
	// back (a running host follows within one report); short enough that a key rotated away
	// because it may have leaked stops being honoured within days, not months.
	KeyGrace time.Duration `envconfig:"KEY_GRACE" default:"168h" desc:"how long after hq key rotate the key it replaced is still vouched for to hosts that hold it and honoured on their reports; a host down longer must be given the new HOSTD_CONTROLLER_KEY"`
}

// Check reports the first thing in c that would stop the controller from running.
func (c Config) Check() error {
	switch {
	case c.AuditRetain < 0:
		return errors.New("HQ_AUDIT_RETAIN must not be negative")
	case c.StuckAttempts < 1:
		return errors.New("HQ_STUCK_ATTEMPTS must be at least 1")
	case c.StuckAfter <= 0:
		return errors.New("HQ_STUCK_AFTER must be positive")
	case c.SilentAfter <= 0:
		return errors.New("HQ_SILENT_AFTER must be positive")
	case c.DriftThreshold < 1:
		return errors.New("HQ_DRIFT_THRESHOLD must be at least 1")
	case c.Retain <= 0:
		return errors.New("HQ_RETAIN must be positive")
	case c.PruneEvery <= 0:
		return errors.New("HQ_PRUNE_EVERY must be positive")
	case c.MaxReportsInFlight < 1:
		return errors.New("HQ_MAX_REPORTS_IN_FLIGHT must be at least 1")
	case c.CommitWait < 0 || c.CommitWait > 100*time.Millisecond:
		return errors.New("HQ_COMMIT_WAIT must be from 0 to 100ms")
	case c.ReportsPerNode < 0:
		return errors.New("HQ_REPORTS_PER_NODE must be at least 1")
	case c.NodeReportRate < 0 || c.NodeReportBurst < 0:
		return errors.New("HQ_NODE_REPORT_RATE and HQ_NODE_REPORT_BURST must not be negative (a rate of 0 turns the bound off)")
	case c.AuthFailures < 0:
		return errors.New("HQ_AUTH_FAILURES must not be negative (0 turns the bound off)")
	case c.RetryAfter < 1:
		return errors.New("HQ_RETRY_AFTER must be at least 1 (second)")
	case (c.TLSCert == "") != (c.TLSKey == ""):
		return errors.New("HQ_TLS_CERT and HQ_TLS_KEY go together")
	case c.ClientCA != "" && c.TLSCert == "":
		return errors.New("HQ_CLIENT_CA needs HQ_TLS_CERT and HQ_TLS_KEY: client certificates come with TLS")
	case c.MaxConns < 1:
		return errors.New("HQ_MAX_CONNS must be at least 1")
	case c.KeyGrace <= 0:
		return errors.New("HQ_KEY_GRACE must be positive")
	case c.Lease < 0: // zero is the default, for a Config made without envconfig
		return errors.New("HQ_LEASE must be positive")
	case c.MaxPolls < 0:
		return errors.New("HQ_MAX_POLLS must be positive (or unset, for its default)")
	case c.ConnReserve < 0 || c.ConnReserve >= c.MaxConns:
		return errors.New("HQ_CONN_RESERVE must be from 0 (its default) to less than HQ_MAX_CONNS")
	case c.PollsPerNode < 0:
		return errors.New("HQ_POLLS_PER_NODE must be at least 1 (or unset, for its default)")
	case c.Pprof && c.MetricsAddr == "":
		return errors.New("HQ_PPROF serves the profiler on HQ_METRICS_ADDR's listener: set HQ_METRICS_ADDR too (on loopback)")
	// Empty is the default, for a Config made without envconfig.
	case c.LongPoll != "" && c.LongPoll != "lot" && c.LongPoll != "handler":
		return fmt.Errorf("HQ_LONGPOLL must be lot or handler, not %q", c.LongPoll)
	case c.ReportDecoder != "" && c.ReportDecoder != "scanner" && c.ReportDecoder != "general":
		return fmt.Errorf("HQ_REPORT_DECODER must be scanner or general, not %q", c.ReportDecoder)
	}
	if err := db.CheckName(c.DB); err != nil {
		return err
	}
	if err := c.checkOIDC(); err != nil {
		return err
	}
	if _, err := c.SigningKeyFile(); err != nil {
		return err
	}
	_, err := c.SecretsKeyPath()
	return err
}

// SecretsKeyPath is where the controller's key for secrets lives: HQ_SECRETS_KEY_FILE, or
// beside the database file, as the signing key is. It is never in the database, so a copy of
// the database (a backup, a stolen disk) holds ciphertext that nothing in it opens.
func (c Config) SecretsKeyPath() (string, error) {
	switch {
	case c.SecretsKeyFile != "":
		return c.SecretsKeyFile, nil
	case db.IsPostgres(c.DB):
		return "", fmt.Errorf("HQ_SECRETS_KEY_FILE is required: HQ_DB (%s) is not a file the secrets key could be kept beside", db.Redacted(c.DB))
	}
	return c.DB + ".secrets.key", nil
}

// checkOIDC refuses a partial or unreadable provider configuration at start, rather than at
// the first person's sign-in.
func (c Config) checkOIDC() error {
	if c.OIDCIssuer == "" {
		if c.OIDCClientID != "" || c.OIDCClientSecretFile != "" || c.OIDCRoles != "" || c.OIDCRedirectURL != "" {
			return errors.New("HQ_OIDC_CLIENT_ID, HQ_OIDC_CLIENT_SECRET_FILE, HQ_OIDC_ROLES and HQ_OIDC_REDIRECT_URL need HQ_OIDC_ISSUER")
		}
		return nil
	}
	if err := webui.CheckIssuer(c.OIDCIssuer); err != nil {
		return fmt.Errorf("HQ_OIDC_ISSUER: %w", err)
	}
	switch {
	case c.OIDCClientID == "":
		return errors.New("HQ_OIDC_CLIENT_ID is required with HQ_OIDC_ISSUER")
	case c.OIDCClientSecretFile == "":
		return errors.New("HQ_OIDC_CLIENT_SECRET_FILE is required with HQ_OIDC_ISSUER: a file holding the client's secret")
	case c.OIDCRoles == "":
		return errors.New("HQ_OIDC_ROLES is required with HQ_OIDC_ISSUER, e.g. hq-admins=admin,*=viewer")
	}
	if _, err := webui.ParseRoles(c.OIDCRoles); err != nil {
		return fmt.Errorf("HQ_OIDC_ROLES: %w", err)
	}
	if c.OIDCRedirectURL != "" {
		if err := webui.CheckRedirectURL(c.OIDCRedirectURL); err != nil {
			return fmt.Errorf("HQ_OIDC_REDIRECT_URL: %w", err)
		}
	}
	return nil
}

// oidc reads the client secret and builds the pages' provider client; nil without
// HQ_OIDC_ISSUER. Check has passed.
func (c Config) oidc(log *slog.Logger) (*webui.OIDC, error) {
	if c.OIDCIssuer == "" {
		return nil, nil
	}
	secret, err := os.ReadFile(c.OIDCClientSecretFile)
	if err != nil {
		return nil, fmt.Errorf("HQ_OIDC_CLIENT_SECRET_FILE: %w", err)
	}
	roles, _ := webui.ParseRoles(c.OIDCRoles) // checked
	claim := c.OIDCRoleClaim
	if claim == "" { // a Config made without envconfig
		claim = "groups"
	}
	o, err := webui.NewOIDC(webui.OIDCConfig{Issuer: c.OIDCIssuer, ClientID: c.OIDCClientID,
		ClientSecret: strings.TrimSpace(string(secret)), RoleClaim: claim, Roles: roles, RedirectURL: c.OIDCRedirectURL}, log)
	if err != nil {
		return nil, fmt.Errorf("HQ_OIDC_*: %w (HQ_OIDC_CLIENT_SECRET_FILE is %s)", err, c.OIDCClientSecretFile)
	}
	return o, nil
}

// SigningKeyFile is where the controller's signing key lives: HQ_KEY_FILE, or beside the
// database file. A database that is not a file (a URL) has no beside, so it needs
// HQ_KEY_FILE; every controller on one database must be given the same file.
func (c Config) SigningKeyFile() (string, error) {
	switch {
	case c.KeyFile != "":
		return c.KeyFile, nil
	case db.IsPostgres(c.DB):
		return "", fmt.Errorf("HQ_KEY_FILE is required: HQ_DB (%s) is not a file the signing key could be kept beside", db.Redacted(c.DB))
	}
	return KeyPath(c.DB), nil
}

// KeyPath is where the signing key of the database file at dbPath lives by default: beside
// it, so every controller sharing the database shares the key.
func KeyPath(dbPath string) string { return dbPath + ".key" }

// Run serves the controller until ctx ends, then shuts down gracefully. It listens before it
// serves, so a bad address fails at once; ready, if set, is called with the bound address.
func Run(ctx context.Context, cfg Config, log *slog.Logger, ready func(addr string)) error {
	if err := cfg.Check(); err != nil {
		return err
	}
	secretsPath, _ := cfg.SecretsKeyPath() // checked above
	secretsKey, err := seal.LoadKeys(secretsPath)
	if err != nil {
		return fmt.Errorf("the secrets key: %w", err)
	}
	store, err := db.Open(ctx, cfg.DB, db.Options{StuckAttempts: cfg.StuckAttempts, StuckAfter: cfg.StuckAfter,
		SilentAfter: cfg.SilentAfter, DriftThreshold: cfg.DriftThreshold, LeaseFor: cfg.Lease, CommitWait: cfg.CommitWait, Log: log,
		SecretsKey: secretsKey})
	if err != nil {
		return err
	}
	defer store.Close()
	keyFile, _ := cfg.SigningKeyFile() // checked above
	keys, err := newKeyWatcher(keyFile, cfg.KeyGrace, log)
	if err != nil {
		return err
	}
	srv := &api.Server{NodeCertificates: cfg.ClientCA != "", Store: store, AdminToken: cfg.AdminToken, Instance: instanceName(), Keys: keys.current, Log: log, MaxWait: maxWait,
		MaxReportsInFlight: cfg.MaxReportsInFlight, RetryAfter: cfg.RetryAfter, GeneralDecoder: cfg.ReportDecoder == "general",
		MaxPolls: pollBound(cfg, log), PollsPerNode: cfg.PollsPerNode, NoPacing: !cfg.Pacing,
		ReportsPerNode: cfg.ReportsPerNode, NodeReportRate: cfg.NodeReportRate, NodeReportBurst: cfg.NodeReportBurst,
		Guesses: guesses.New(cfg.AuthFailures), RotateKey: rotateKey(keyFile, cfg.KeyGrace)}
	serveMetrics, closeMetrics, err := metricsListener(srv, store, cfg.MetricsAddr, cfg.Pprof, log)
	if err != nil {
		return err
	}
	defer closeMetrics()
	pages, err := webui.New(store, cfg.AdminToken, log)
	if err != nil {
		return err
	}
	if pages.OIDC, err = cfg.oidc(log); err != nil {
		return err
	}
	pages.Polls = func() (int, int) { return srv.Waiting(), srv.Polling() }
	pages.Guesses = srv.Guesses // one count of an address's wrong tokens, wherever it sent them
	retention := db.DefaultRetention
	retention.For = cfg.Retain
	// Everything that runs beside the requests, started before the first request (each ready
	// before the next) and stopped after the last, before the store closes. The leased ones
	// run in one controller at a time of those sharing the database, and in another within a
	// lease's length once that one dies: work a controller began is any controller's to finish.
	auditRetain := cmp.Or(cfg.AuditRetain, 8760*time.Hour)
	pruner := workers.Loop("pruner", func(ctx context.Context) { prune(ctx, store, retention, auditRetain, cfg.PruneEvery, log) })
	leased := func(w workers.Worker) workers.Worker { return store.Leased(w, srv.Instance) }
	run := []workers.Worker{
		store.Committer(),        // reports that arrive together share a commit
		store.Watcher(),          // long-polls wake when another controller moves their generation
		store.Checkpointer(),     // SQLite's log is copied into the file beside the writer
		leased(store.Mover()),    // pins move to a new revision in chunks; placements follow labels
		leased(store.Rollouts()), // rollouts move on in waves
		leased(pruner),           // history past HQ_RETAIN is deleted
		workers.Loop("keys", func(ctx context.Context) { keys.run(ctx, time.Second) }), // a rotated key is taken up
	}
	if serveMetrics != nil {
		run = append(run, workers.Loop("metrics", serveMetrics))
	}
	// Not ended by ctx: the requests still being answered after it ends lean on them.
	background := workers.Start(context.WithoutCancel(ctx), log, run...)
	defer background.Stop()
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", cfg.Addr, err)
	}
	// Requests live in a context of their own, ended at shutdown so long-polls return at once.
	base, endRequests := context.WithCancel(context.Background())
	defer endRequests()
	hs := httpServer(handler(srv, pages, log), srv.MaxWait, base)
	// The server's own lines say why a connection was refused before it became a request (a
	// client certificate expired or from another CA, plain HTTP on the HTTPS port): they
	// belong in the controller's log, not on stderr beside it.
	hs.ErrorLog = slog.NewLogLogger(log.Handler(), slog.LevelWarn)
	ln = newLimitListener(ln, cfg.MaxConns)
	if cfg.TLSCert != "" {
		tc, err := tlsConfig(cfg.TLSCert, cfg.TLSKey, cfg.ClientCA)
		if err != nil {
			ln.Close()
			return err
		}
		hs.TLSConfig = tc
		// Only HTTPS: a plain request is answered 400 by the TLS listener, and reaches nothing.
		ln = tls.NewListener(ln, tc)
	}
	// Long-polls that wait are parked in the lot, without goroutines; answered, their
	// connections come back to the server through the lot's Returns. With HQ_LONGPOLL=handler
	// the lot stays empty, and every poll waits in its handler.
	lot := longpoll.NewLot(ln.Addr(), answering)
	lot.Log = log
	if cfg.LongPoll != "handler" {
		srv.Lot = lot
	}
	// A connection the lot gives back is one kept alive after its answer: the server reads its
	// next request as the first of a connection, with ReadHeaderTimeout, so here that is the
	// idle timeout a kept-alive connection has.
	rs := httpServer(hs.Handler, srv.MaxWait, base)
	rs.ErrorLog, rs.ReadHeaderTimeout = hs.ErrorLog, hs.IdleTimeout
	log.Info("hq serving", "addr", ln.Addr().String(), "db", store.Where(), "instance", srv.Instance, "max_polls", srv.MaxPolls)
	if ready != nil {
		ready(ln.Addr().String())
	}
	errc, returned := make(chan error, 1), make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	go func() { returned <- rs.Serve(lot.Returns()) }()
	select {
	case err := <-errc:
		lot.Close()
		rs.Close()
		<-returned
		return err
	case <-ctx.Done():
	}
	log.Info("hq shutting down")
	shut, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	endRequests()
	lot.Close()
	err = errors.Join(hs.Shutdown(shut), rs.Shutdown(shut))
	<-errc // Serve has returned http.ErrServerClosed
	<-returned
	return err
}

// maxPolls is HQ_MAX_POLLS, or by default three quarters of the files the process may open (Go
// raises the soft limit to the hard one at start): each waiting poll holds one, and the rest
// are for reports, the operator and the database. 0, no bound, when the limit is unknown or
// as good as none.
func maxPolls(set int) int {
	if set > 0 {
		return set
	}
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil || rl.Cur > 1<<30 {
		return 0
	}
	return int(rl.Cur / 4 * 3)
}

// connReserve is HQ_CONN_RESERVE, or by default a tenth of HQ_MAX_CONNS, and at least half of
// it up to 64: connections for reports, operators and /healthz that long-polls never take.
func connReserve(cfg Config) int {
	if cfg.ConnReserve > 0 {
		return cfg.ConnReserve
	}
	return max(cfg.MaxConns/10, min(cfg.MaxConns/2, 64))
}

// pollBound is the long-polls that may wait at once: HQ_MAX_POLLS or its default, never more
// than the connections HQ_MAX_CONNS leaves beside the reserve. A poll holds a connection
// while it waits, so polls past that would take the connections reports and operators need;
// a bound that asked more is clamped, and the log says so.
func pollBound(cfg Config, log *slog.Logger) int {
	room := max(cfg.MaxConns-connReserve(cfg), 1)
	n := maxPolls(cfg.MaxPolls)
	if n > 0 && n <= room {
		return n
	}
	// Said at every start the bound is clamped, which the shipped unit's file limit makes the
	// usual case: an operator who set HQ_MAX_POLLS sees why it is not the one in force.
	log.Info("long-polls bounded by the connections left beside the reserve", "max_polls", room,
		"asked", n, "max_conns", cfg.MaxConns, "conn_reserve", connReserve(cfg))
	return room
}

// answering bounds the parked long-polls answered at once: a new revision wakes every node,
// and each answer is a declaration composed and signed.
const answering = 64

// prune deletes the history retention no longer keeps, every period, until ctx ends. Each
// window of rows is its own short transaction, so reports keep landing while it runs.
func prune(ctx context.Context, store *db.Store, r db.Retention, audit, every time.Duration, log *slog.Logger) {
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		start := time.Now()
		deleted, err := store.Prune(ctx, r)
		switch {
		case ctx.Err() != nil:
			return
		case err != nil:
			log.Error("pruning history", "err", err)
		case deleted["transitions"]+deleted["reports"]+deleted["sends"]+deleted["drifts"] > 0:
			log.Info("pruned history", "transitions", deleted["transitions"], "reports", deleted["reports"],
				"sends", deleted["sends"], "drifts", deleted["drifts"], "took", time.Since(start).Round(time.Millisecond))
		}
		if n, err := store.PruneAudit(ctx, audit, r.Window); err != nil && ctx.Err() == nil {
			log.Error("pruning the audit log", "err", err)
		} else if n > 0 {
			log.Info("pruned the audit log", "entries", n)
		}
	}
}

// rotateKey is what POST /controller-key/rotate does: hq key rotate's rotation of the key
// file, which this controller's watcher then takes up as it takes up one made by hand.
func rotateKey(path string, grace time.Duration) func() (string, error) {
	return func() (string, error) {
		k, err := RotateKeys(path, time.Now(), grace)
		if err != nil {
			return "", err
		}
		return keys.Fingerprint(k.Public()), nil
	}
}

// maxWait bounds a declaration long-poll.
const maxWait = 60 * time.Second

// httpServer bounds what one client can hold: the time to send its request, the time to read
// its answer (a long-poll's wait and then some), an idle keep-alive, and the size of its headers.
// The idle timeout is far shorter than hostd's interval, so the connection a host reports on is
// closed between reports rather than held, with its buffers and goroutine, beside the
// long-poll: a fleet of 10,000 would otherwise keep 10,000 idle connections too.
func httpServer(h http.Handler, maxWait time.Duration, base context.Context) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       time.Minute,
		WriteTimeout:      maxWait + 30*time.Second,
		IdleTimeout:       5 * time.Second,
		MaxHeaderBytes:    64 << 10,
		BaseContext:       func(net.Listener) context.Context { return base },
	}
}

// handler mounts the API and the pages on one router: two faces of one store, neither of
// which knows the other.
func handler(srv *api.Server, pages *webui.UI, log *slog.Logger) http.Handler {
	r := chi.NewRouter()
	r.Use(middleware.Recoverer, logRequests(log), strictTransport)
	srv.Mount(r)
	pages.Routes(r)
	return r
}

// hsts is Strict-Transport-Security's one value, shared by every answer: a browser that once
// reached the controller over HTTPS never tries it over plain HTTP for a year.
var hsts = []string{"max-age=31536000"}

// strictTransport sets Strict-Transport-Security on every answer over TLS.
func strictTransport(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.TLS != nil {
			w.Header()["Strict-Transport-Security"] = hsts
		}
		next.ServeHTTP(w, r)
	})
}

// logRequests logs every request but the long-polls that ended with nothing new, which would
// drown the log of a large mesh.
func logRequests(log *slog.Logger) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			ww := middleware.NewWrapResponseWriter(w, r.ProtoMajor)
			start := time.Now()
			next.ServeHTTP(ww, r)
			// Nothing written: a long-poll parked in the lot, which logs its own answer.
			if ww.Status() == http.StatusNotModified || ww.Status() == 0 {
				return
			}
			level := slog.LevelInfo
			if routine(r, ww.Status()) {
				level = slog.LevelDebug
			}
			log.LogAttrs(r.Context(), level, "http",
				slog.String("method", r.Method), slog.String("path", r.URL.Path),
				slog.Int("status", ww.Status()), slog.Duration("took", time.Since(start)))
		})
	}
}

// routine says whether a request is one a fleet makes all the time: a report taken in, or one
// turned away to come back later. Logged at debug, so the log of 10,000 nodes says what is news.
func routine(r *http.Request, status int) bool {
	return r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/reports") &&
		(status == http.StatusOK || status == http.StatusServiceUnavailable)
}

// instanceName names this process in the sends it records: host, pid and a random suffix, so
// two controllers on one machine, or one restarted, are told apart.
func instanceName() string {
	host, err := os.Hostname()
	if err != nil {
		host = "hq"
	}
	return fmt.Sprintf("%s:%d:%s", host, os.Getpid(), rand.Text()[:6])
}
