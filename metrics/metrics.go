// Package metrics gives the controller's figures in the Prometheus text format: what the
// store holds, read at scrape time from one snapshot, and what the process counts as reports
// arrive, beside the Go and process collectors.
package metrics

import (
	"context"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/meshhq/hq/db"
)

// Metrics is the controller's registry.
type Metrics struct {
	reg      *prometheus.Registry
	received prometheus.Counter
	refused  prometheus.Counter
	ingest   prometheus.Histogram
	log      *slog.Logger
}

// Server is what /metrics reads of the API server.
type Server interface {
	// Shed is how many reports were turned away before they were read.
	Shed() int64
	// Waiting is how many long-polls wait now.
	Waiting() int
	// Deferred is how many long-polls were answered at once for HQ_MAX_POLLS; Polling is how
	// many hosts poll on their interval because of it.
	Deferred() int64
	Polling() int
	// Unread is how many reports were taken in as repeats without reading their results.
	Unread() int64
	// Held is how many new declarations waited for room among the reports in flight.
	Held() int64
	// Throttled is how many reports were turned away because their node reported faster
	// than HQ_NODE_REPORT_RATE.
	Throttled() int64
}

// New registers the store's figures, the report counters, what srv counts of reports shed and
// long-polls, and the Go and process collectors.
func New(store Store, srv Server, log *slog.Logger) *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		received: prometheus.NewCounter(prometheus.CounterOpts{Name: "hq_reports_received_total",
			Help: "Reports taken in and committed."}),
		refused: prometheus.NewCounter(prometheus.CounterOpts{Name: "hq_reports_refused_total",
			Help: "Reports read but refused (bad request, wrong send, conflict, unavailable): nothing of them was stored."}),
		ingest: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "hq_report_ingest_seconds",
			Help:    "Time from admitting a report to answering it: reading, decoding and committing it.",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}}),
		log: log,
	}
	m.reg.MustRegister(m.received, m.refused, m.ingest,
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "hq_reports_shed_total",
			Help: "Reports turned away with 503 and Retry-After before their body was read (HQ_MAX_REPORTS_IN_FLIGHT, HQ_REPORTS_PER_NODE)."},
			func() float64 { return float64(srv.Shed()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "hq_reports_throttled_total",
			Help: "Reports turned away with 429 and Retry-After before their body was read, their node reporting faster than HQ_NODE_REPORT_RATE: nothing of them was stored."},
			func() float64 { return float64(srv.Throttled()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "hq_long_polls_waiting",
			Help: "Long-polls for a declaration waiting now: about one per host that is up."},
			func() float64 { return float64(srv.Waiting()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "hq_long_polls_deferred_total",
			Help: "Long-polls answered at once, with Retry-After, because HQ_MAX_POLLS waited already: their hosts poll instead."},
			func() float64 { return float64(srv.Deferred()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "hq_declarations_held_total",
			Help: "New declarations a long-poll waited to be answered with while the reports in flight filled half of HQ_MAX_REPORTS_IN_FLIGHT, so a revision's wave is answered as fast as its reports are taken in rather than turned away (HQ_PACING)."},
			func() float64 { return float64(srv.Held()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "hq_reports_unread_total",
			Help: "Reports taken in as repeats of the node's last one without reading their results, which were byte for byte the last ones (HQ_REPORT_DECODER)."},
			func() float64 { return float64(srv.Unread()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "hq_reports_one_statement_total",
			Help: "Reports the database took in one statement of its own (PostgreSQL's hq_report_settled and hq_report_steady); 0 on SQLite, which takes every report statement by statement in this process."},
			func() float64 { return float64(store.ReportsInOneStatement()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "hq_reports_steady_one_read_total",
			Help: "Reports that repeat their node's last one, taken on SQLite with one read and two writes rather than statement by statement; 0 on PostgreSQL, which counts them in hq_reports_one_statement_total."},
			func() float64 { return float64(store.ReportsSteadyInOneRead()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "hq_hosts_polling",
			Help: "Hosts that poll on their interval rather than hold a long-poll, because HQ_MAX_POLLS waited already when they last asked."},
			func() float64 { return float64(srv.Polling()) }),
		&storeCollector{store: store, log: log},
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	return m
}

// ObserveReport counts one report and times it.
func (m *Metrics) ObserveReport(committed bool, took time.Duration) {
	if committed {
		m.received.Inc()
	} else {
		m.refused.Inc()
	}
	m.ingest.Observe(took.Seconds())
}

// Handler serves the registry. A figure the store cannot read is logged and left out; the
// rest is still served.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{ErrorLog: slogAdapter{m.log}, ErrorHandling: promhttp.ContinueOnError})
}

// Gatherer is the registry, for tests.
func (m *Metrics) Gatherer() prometheus.Gatherer { return m.reg }

type slogAdapter struct{ log *slog.Logger }

func (a slogAdapter) Println(v ...any) { a.log.Error("serving /metrics", "err", v) }

var (
	nodesDesc = prometheus.NewDesc("hq_nodes", "Registered nodes by status, as /status counts them.",
		[]string{"status"}, nil)
	resourcesDesc = prometheus.NewDesc("hq_resources", "Resources of every node by state.",
		[]string{"state"}, nil)
	stuckDesc = prometheus.NewDesc("hq_stuck_resources", "Stuck resources, each once however many nodes it is stuck on, by scope.",
		[]string{"scope"}, nil)
	sendsDesc = prometheus.NewDesc("hq_sends", "Sends of a declaration that retention keeps, by outcome.",
		[]string{"outcome"}, nil)
	rolloutsDesc = prometheus.NewDesc("hq_rollouts", "Rollouts by state.",
		[]string{"state"}, nil)
	rolloutNodesDesc = prometheus.NewDesc("hq_rollout_nodes", "Nodes of each unfinished rollout by their state in it.",
		[]string{"rollout", "module", "placement", "state"}, nil)
	dbBytesDesc = prometheus.NewDesc("hq_database_bytes", "Size of the database: its file, and its write-ahead log.",
		[]string{"file"}, nil)
)

// Store is what the metrics read of the store: its figures, in one read.
type Store interface {
	Figures(ctx context.Context) (db.Figures, error)
	ReportsInOneStatement() int64
	ReportsSteadyInOneRead() int64
}

// storeCollector reads the store's figures at scrape time, in one read transaction, rather
// than keeping gauges up to date on every write.
type storeCollector struct {
	store Store
	log   *slog.Logger
}

func (c *storeCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{nodesDesc, resourcesDesc, stuckDesc, sendsDesc, rolloutsDesc, rolloutNodesDesc, dbBytesDesc} {
		ch <- d
	}
}

// scrapeTimeout bounds one read of the figures: Prometheus gives up at 10 s by default.
const scrapeTimeout = 8 * time.Second

func (c *storeCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), scrapeTimeout)
	defer cancel()
	f, err := c.store.Figures(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(nodesDesc, err)
		return
	}
	gauge := func(d *prometheus.Desc, v float64, label string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, label)
	}
	for st, n := range f.Nodes {
		gauge(nodesDesc, float64(n), string(st))
	}
	for st, n := range f.Resources {
		gauge(resourcesDesc, float64(n), string(st))
	}
	for scope, n := range f.Stuck {
		gauge(stuckDesc, float64(n), scope)
	}
	for o, n := range f.Sends {
		gauge(sendsDesc, float64(n), o)
	}
	for st, n := range f.Rollouts {
		gauge(rolloutsDesc, float64(n), string(st))
	}
	for _, r := range f.Unfinished {
		id := strconv.FormatInt(r.ID, 10)
		for st, n := range r.Nodes {
			ch <- prometheus.MustNewConstMetric(rolloutNodesDesc, prometheus.GaugeValue, float64(n), id, r.Module, r.Placement, st)
		}
	}
	gauge(dbBytesDesc, float64(f.DatabaseBytes), "db")
	gauge(dbBytesDesc, float64(f.WALBytes), "wal")
}
