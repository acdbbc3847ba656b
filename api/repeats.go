package api

import (
	"hash/maphash"
	"sync"

	"github.com/meshhq/hq"
)

// repeats remembers, for each node, the results of its last report that could be repeated: in
// a fleet's steady state a host sends the same results, byte for byte, on every interval, and
// reading 500 of them again is most of what such a report costs. A report whose results'
// bytes hash as the remembered ones, for the same declaration, is taken in without reading them
// (db.IngestOptions.Repeat): the store checks that it repeats the node's last report, and
// when it does not, the report is read whole after all.
//
// Only results the store took in whole, with no failure and no drift, are remembered: those
// are what a repeat may stand for. The hash is keyed per process, so no one can make two
// results collide on purpose; and a host that could would only misreport itself, which it can
// do by saying anything. HQ_REPORT_DECODER=general turns this off with the scanner.
type repeats struct {
	seed maphash.Seed
	mu   sync.Mutex
	last map[string]repeatable
}

// repeatable is what a remembered report stands for.
type repeatable struct {
	hash       uint64
	generation int64
	digest     string
	outcome    string
}

// maxRepeats bounds the nodes remembered: past it (far past any fleet's size) the memory is
// started again, and the next report of each node is read whole.
const maxRepeats = 1 << 20

func newRepeats() *repeats { return &repeats{seed: maphash.MakeSeed(), last: map[string]repeatable{}} }

func (r *repeats) hash(results []byte) uint64 { return maphash.Bytes(r.seed, results) }

// match returns the outcome a report stands for when its results hash as node's remembered
// ones and it answers the same declaration.
func (r *repeats) match(node string, head hq.Report, hash uint64) (string, bool) {
	r.mu.Lock()
	e, ok := r.last[node]
	r.mu.Unlock()
	if !ok || e.hash != hash || e.generation != head.Generation || e.digest != head.Digest || head.Refused != nil {
		return "", false
	}
	return e.outcome, true
}

// remember records a report taken in whole, when a repeat of it may stand for it; otherwise it
// forgets the node's last one.
func (r *repeats) remember(node string, rep hq.Report, hash uint64, outcome string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !repeatableReport(rep) {
		delete(r.last, node)
		return
	}
	if len(r.last) >= maxRepeats {
		clear(r.last)
	}
	r.last[node] = repeatable{hash: hash, generation: rep.Generation, digest: rep.Digest, outcome: outcome}
}

func repeatableReport(rep hq.Report) bool {
	if rep.Refused != nil || len(rep.Results) == 0 {
		return false
	}
	for _, res := range rep.Results {
		if res.Outcome == hq.StateFailed || res.Drift {
			return false
		}
	}
	return true
}
