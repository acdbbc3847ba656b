package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/internal/testdb"
)

// BenchmarkReportsOverLoopback posts 500-resource reports in which nothing changed to a real
// hq serve process over loopback, from many nodes at once: the network, the HTTP server and
// the real binary included, as a mesh's steady state would load it.
//
//	go test ./e2e -run '^$' -bench ReportsOverLoopback -benchtime 5s
func BenchmarkReportsOverLoopback(b *testing.B) {
	// Plain HTTP: the figures of it in BENCHMARKS.md were measured so, and stay comparable.
	// 32 nodes posting as fast as they can: past any host's rate, and two at once.
	ctl := startPlainController(b, testdb.New(b), "HQ_NODE_REPORT_RATE=0", "HQ_REPORTS_PER_NODE=64")
	c := newClient(b, ctl.url)
	rs := make([]hq.Resource, 500)
	for i := range rs {
		rs[i] = hq.Resource{Name: fmt.Sprintf("f%03d", i), Kind: hq.KindFile, Path: fmt.Sprintf("/etc/app/f%03d", i), Content: "x\n"}
	}
	c.putModule("app", rs...)
	const nodes = 32
	type node struct {
		name, token string
		body        []byte
	}
	var ns []node
	for i := range nodes {
		n := node{name: fmt.Sprintf("n%02d", i)}
		n.token = c.register(n.name)
		c.assign(n.name, "app", false)
		var d hq.Declaration
		req, _ := http.NewRequest("GET", ctl.url+"/api/v1/nodes/"+n.name+"/declaration", nil)
		req.Header.Set("Authorization", "Bearer "+n.token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		json.NewDecoder(resp.Body).Decode(&d)
		resp.Body.Close()
		rep := hq.Report{SendID: d.SendID, Generation: d.Generation, Digest: d.Digest, Signature: d.Signature, Results: make([]hq.Result, len(rs))}
		for j, r := range rs {
			rep.Results[j] = hq.Result{Module: "app", Resource: r.Name, Outcome: hq.StateApplied, Attempted: true}
		}
		n.body, _ = json.Marshal(rep)
		ns = append(ns, n)
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	// post reads the whole answer, as hostd does, so the connection is kept for the next one.
	post := func(n node) error {
		req, _ := http.NewRequest("POST", ctl.url+"/api/v1/nodes/"+n.name+"/reports", bytes.NewReader(n.body))
		req.Header.Set("Authorization", "Bearer "+n.token)
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		_, err = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("status %d", resp.StatusCode)
		}
		return err
	}
	for _, n := range ns {
		// The first report of each node moves its rows; the rest change nothing.
		if err := post(n); err != nil {
			b.Fatal(err)
		}
	}
	var next atomic.Int64
	b.SetParallelism(8)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			// Fatal may not be called from RunParallel's goroutines.
			if err := post(ns[int(next.Add(1))%len(ns)]); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "reports/s")
}
