package hostd

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"
	"time"

	"github.com/meshhq/hq"
)

const declarationFile = "declaration.json"

// Run is the daemon: it reconciles the last verified declaration every interval and at once on
// every new one, also while the controller cannot be reached, and reports after every
// reconcile. It returns when ctx is done. The services it supervises keep running, to be
// re-adopted by the next start, unless cfg.StopServicesOnExit is set.
func Run(ctx context.Context, cfg Config, log *slog.Logger) error {
	if err := cfg.Check(); err != nil {
		return err
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	lock, err := lockStateDir(cfg.StateDir)
	if err != nil {
		return err
	}
	defer lock.release()
	eng, err := NewEngine(EngineConfig{Root: cfg.Root, StateDir: cfg.StateDir, Interval: cfg.Interval, Logger: log,
		StopServicesOnExit: cfg.StopServicesOnExit, FailpointGroupCommitPause: failpointGroupCommitPauseFromEnv(),
		FailpointAt: failpointAtFromEnv(),
		Node:        cfg.Node, ContainerCLI: cfg.ContainerCLI, ContainerNetworkPrefix: cfg.ContainerNetworkPrefix,
		ImageGCAfter: cfg.ImageGCAfter})
	if err != nil {
		return err
	}
	defer eng.Close()
	if eng.secretsKey, err = loadSecretsKey(cfg.StateDir); err != nil {
		return err
	}
	c := newClient(cfg.Controllers(), cfg.Node, cfg.Token)
	if c.HTTP.Transport, err = transportFor(cfg.CA, cfg.Cert, cfg.Key); err != nil {
		return err
	}
	tw := newTLSWatch(log, cfg.Controller, cfg.CA, cfg.Cert)
	watchTLS(c, tw)
	keys, err := loadTrust(ctx, cfg, c, log)
	if err != nil {
		if ctx.Err() != nil {
			return nil // stopped while learning the key
		}
		return fmt.Errorf("controller key: %w", err)
	}
	a := &daemon{cfg: cfg, log: log, eng: eng, stuck: map[string]bool{}, logged: map[*hq.Report]string{},
		metrics: newTextfile(cfg.MetricsFile), trust: keys, tls: tw, host: hostFacts()}
	a.current = a.loadDeclaration()

	decls := make(chan incoming)
	sent := make(chan delivered)
	applied, _ := eng.Applied()
	p := &poller{c: c, node: cfg.Node, wait: cfg.Wait, interval: cfg.Interval, log: log, trust: keys, after: applied, out: decls}
	switch {
	case a.current != nil:
		p.after = max(p.after, a.current.Generation)
	case applied == 0:
		// Nothing yet, not even generation 0: ask for whatever there is, so a node with no
		// modules assigned still reports, and reads converged rather than new.
		p.after = -1
	default:
		// The kept declaration is gone or no longer verifies, so there is nothing to reconcile:
		// ask for the applied generation again, not only for newer ones, or the controller
		// would wait for a newer one that may never come. The same generation and digest
		// passes the fence.
		p.after = applied - 1
	}
	a.rep = newReporter(c, log, sent)

	bg, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { p.run(bg) })
	wg.Go(func() { a.rep.run(bg) })
	wg.Go(func() { registerSecretsKey(bg, c, eng.secretsKey, cfg.Interval, log) })
	defer func() { stop(); wg.Wait() }()

	log.Info("hostd running", "node", cfg.Node, "controller", cfg.Controller, "root", cfg.Root,
		"generation", applied, "key", keyFingerprint(keys.held()))
	first := cfg.Interval
	if a.current != nil {
		first = 0
	}
	tick := time.NewTimer(first)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			log.Info("hostd stopping")
			return nil
		case in := <-decls:
			// Reconcile at once: a new declaration is applied, a refusal is reported.
			a.receive(in)
			a.reconcileAndReport(ctx)
			tick.Reset(cfg.Interval)
		case <-tick.C:
			a.reconcileAndReport(ctx)
			tick.Reset(cfg.Interval)
		case d := <-sent:
			a.delivered(d)
		}
	}
}

// daemon is what Run keeps between reconciles; only Run's goroutine touches it.
type daemon struct {
	cfg     Config
	log     *slog.Logger
	eng     *Engine
	rep     *reporter
	current *hq.Declaration
	// refusal waits to be delivered in a report.
	refusal *hq.Refusal
	// tls keeps a refusal of TLS for the next report, until one carrying it is delivered.
	tls *tlsWatch
	// stuck is the controller's stuck list from its last answer.
	stuck map[string]bool
	// logged is the report line logged for each report not yet answered. The controller alone
	// decides what is stuck, so when its line for a report differs, hostd logs that one too:
	// host and controller end up with the same words for every report.
	logged map[*hq.Report]string
	// metrics writes HOSTD_METRICS_FILE after every reconcile; nil writes nothing.
	metrics *textfile
	// trust is the controller key held, shared with the poller.
	trust *trust
	// host is what hostd says of the host, in every report until one carrying it is delivered.
	host *hq.HostFacts
}

// loadDeclaration returns the declaration kept from the last run if it still verifies and is
// what the ledger says was applied, so hostd keeps reconciling without the controller. It is
// kept whole, send id and signature too, so a report after a restart still names its send.
func (a *daemon) loadDeclaration() *hq.Declaration {
	var d hq.Declaration
	ok, err := readJSON(filepath.Join(a.cfg.StateDir, declarationFile), &d)
	if err == nil && ok {
		err = a.trust.verifyKept(&d, a.cfg.Node)
	}
	if err == nil && ok {
		err = a.eng.Admit(&d)
	}
	if err != nil {
		a.log.Error("ignoring the kept declaration", "err", err)
		return nil
	}
	if !ok {
		return nil
	}
	return &d
}

// receive admits a declaration as the current one, or keeps its refusal for the next report.
func (a *daemon) receive(in incoming) {
	d, err := in.d, in.err
	if err == nil {
		err = a.eng.Admit(d)
	}
	if err != nil {
		a.refusal = Refuse(d, err)
		a.log.Warn("refused declaration", "generation", d.Generation, "digest", d.Digest,
			"composed_by", d.ComposedBy, "reason", err.Error())
		return
	}
	if err := writeJSONAtomic(filepath.Join(a.cfg.StateDir, declarationFile), d); err != nil {
		// Applying it matters more than keeping it: the next restart reconciles the older one
		// until the controller sends this one again.
		a.log.Error("keeping declaration", "err", err)
	}
	a.current = d
	a.eng.DropBackoff(d.Retry...)
	a.log.Info("new declaration", "generation", d.Generation, "digest", d.Digest, "send_id", d.SendID)
}

// reconcileAndReport applies the current declaration and hands the report to the reporter.
// With no declaration yet there is nothing to apply, but a refusal (of a declaration, or of
// TLS) is still worth a report.
func (a *daemon) reconcileAndReport(ctx context.Context) {
	started := time.Now().UTC()
	rep := &hq.Report{StartedAt: started, Refused: a.refusal, Transport: a.tls.pending(), Host: a.host, Results: []hq.Result{}}
	sent := 0
	if a.current != nil {
		// The report names the send it answers, as the controller recorded and signed it.
		rep.SendID, rep.Generation, rep.Digest, rep.Signature = a.current.SendID, a.current.Generation, a.current.Digest, a.current.Signature
		rep.Results = a.eng.Reconcile(ctx, a.current)
		sent = a.current.ResourceCount()
	} else if a.refusal == nil && rep.Transport == nil {
		return
	}
	rep.FinishedAt = time.Now().UTC()
	line := hq.TallyReport(rep, sent, func(ref string) bool { return a.stuck[ref] }).Line()
	a.log.Info(line, "generation", rep.Generation)
	a.metrics.write(rep, a.eng.ImagesRemoved(), a.log)
	if len(a.logged) > 16 { // reports the reporter dropped for newer ones are never answered
		clear(a.logged)
	}
	a.logged[rep] = line
	a.rep.submit(rep)
}

// delivered takes in the controller's answer to a report.
func (a *daemon) delivered(d delivered) {
	if d.report.Refused != nil && d.report.Refused == a.refusal {
		a.refusal = nil
	}
	a.tls.delivered(d.report.Transport)
	if d.report.Host != nil && d.report.Host == a.host {
		a.host = nil
	}
	if line, ok := a.logged[d.report]; ok && d.resp.Summary != "" && d.resp.Summary != line {
		a.log.Info(d.resp.Summary, "generation", d.report.Generation, "line", "the controller's")
	}
	delete(a.logged, d.report)
	if d.resp.Key != "" {
		a.trust.offer(d.resp.Key, d.resp.KeyChain)
	}
	stuck := make(map[string]bool, len(d.resp.Stuck))
	for _, ref := range d.resp.Stuck {
		stuck[ref] = true
		if !a.stuck[ref] {
			a.log.Warn("resource stuck", "resource", ref)
		}
	}
	a.stuck = stuck
	// Marked before the retries are taken in: a retry in the same answer wins.
	a.eng.MarkStuck(d.resp.Stuck...)
	if len(d.resp.Retry) > 0 {
		a.eng.DropBackoff(d.resp.Retry...)
		a.log.Info("controller asked to retry", "resources", d.resp.Retry)
	}
}
