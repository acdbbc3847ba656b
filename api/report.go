package api

import (
	"sync"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/api/reportscan"
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
