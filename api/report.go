package api

import (
	"context"
	"errors"
	"sync"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/api/reportscan"
	"github.com/meshhq/hq/db"
)

// decodeReport decodes a report body: by reportscan when it can, which reads the shape hostd
// writes for half the CPU, else (or with general set: HQ_REPORT_DECODER=general) by the general
// decoder, whose answer reportscan's always equals. results, when it has room, holds the
// results.
func decodeReport(body []byte, results []hq.Result, general bool) (hq.Report, error) {
	if general {
		var rep hq.Report
		return rep, unmarshal(body, &rep)
	}
	if rep, ok := reportscan.Scan(body, results); ok {
		return rep, nil
	}
	var rep hq.Report
	err := unmarshal(body, &rep)
	return rep, err
}

// reportBuffers are a report's body and its decoded results, which are most of what a report
// allocates, and so most of the collector's work at a fleet's rate. Nothing decoded points into the body (strings are copied out of it) and
// nothing keeps the results once the report is answered, so both are used again.
type reportBuffers struct {
	body    []byte
	results []hq.Result
}

var reportPool = sync.Pool{New: func() any { return new(reportBuffers) }}

// Buffers larger than these (a report far larger than a fleet's) are left to the collector.
const (
	maxPooledBody    = 1 << 20
	maxPooledResults = 4096
)

func getReportBuffers() *reportBuffers { return reportPool.Get().(*reportBuffers) }

func (b *reportBuffers) put() {
	clear(b.results) // let the results' strings go
	b.results = b.results[:0]
	if cap(b.body) > maxPooledBody || cap(b.results) > maxPooledResults {
		return
	}
	reportPool.Put(b)
}

// errReadWhole says a report must be read whole: it is no repeat the controller can take
// without reading its results.
var errReadWhole = errors.New("read the report whole")

// resultsHash is the hash of a report's results' bytes, when they were found.
type resultsHash struct {
	sum uint64
	ok  bool
}

// ingestRepeat takes a report in without reading its results when they are, byte for byte,
// the node's remembered ones (repeats), and returns errReadWhole when they are not, with the
// hash of the results' bytes for ingestWhole to remember.
func (s *Server) ingestRepeat(ctx context.Context, node string, body []byte, opts db.IngestOptions) (hq.ReportResponse, resultsHash, error) {
	if s.GeneralDecoder {
		return hq.ReportResponse{}, resultsHash{}, errReadWhole
	}
	head, results, ok := reportscan.ScanHeader(body)
	if !ok || results == nil {
		return hq.ReportResponse{}, resultsHash{}, errReadWhole
	}
	hash := resultsHash{s.repeats.hash(results), true}
	outcome, ok := s.repeats.match(node, head, hash.sum)
	if !ok {
		return hq.ReportResponse{}, hash, errReadWhole
	}
	opts.Outcome, opts.Repeat = outcome, true
	resp, err := s.Store.Ingest(ctx, node, head, opts)
	if errors.Is(err, db.ErrNotARepeat) {
		return resp, hash, errReadWhole
	}
	if err == nil {
		s.repeatsTaken.Add(1)
	}
	return resp, hash, err
}

// ingestWhole reads a report whole and takes it in, and remembers its results (by hash) when
// a repeat of them may be taken without reading them.
func (s *Server) ingestWhole(ctx context.Context, node string, body []byte, buf *reportBuffers, hash resultsHash, opts db.IngestOptions) (hq.ReportResponse, error) {
	rep, err := decodeReport(body, buf.results, s.GeneralDecoder)
	buf.results = rep.Results
	if err != nil {
		return hq.ReportResponse{}, err
	}
	// The outcome of the texts as the store keeps them, bounded, as Ingest works it out.
	rep.BoundText()
	opts.Outcome = db.OutcomeDigest(rep)
	resp, err := s.Store.Ingest(ctx, node, rep, opts)
	if err == nil && hash.ok {
		s.repeats.remember(node, rep, hash.sum, opts.Outcome)
	}
	return resp, err
}

// Unread is how many reports were taken in as repeats without reading their results.
func (s *Server) Unread() int64 { return s.repeatsTaken.Load() }
