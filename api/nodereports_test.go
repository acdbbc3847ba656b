package api

import (
	"bufio"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/db"
)

// A report whose Content-Length is past the body limit is refused 413 from its headers, at
// once, without waiting for a body the client has not sent, and its connection closed.
func TestAReportTooLargeIsRefusedFromItsHeaders(t *testing.T) {
	t.Parallel()
	f := setup(t)
	tok := f.node("web-1")
	c := f.dial()
	fmt.Fprintf(c, "POST /api/v1/nodes/web-1/reports HTTP/1.1\r\nHost: hq\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n{", tok, maxBody+1)
	c.SetReadDeadline(time.Now().Add(2 * time.Second))
	r := bufio.NewReader(c)
	resp, err := http.ReadResponse(r, nil)
	if err != nil {
		t.Fatalf("no answer from the headers: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Fatalf("%d, want 413", resp.StatusCode)
	}
	if _, err := r.ReadByte(); err == nil {
		t.Fatal("the connection was kept, its body unread")
	}
}

// One node's reports hold at most two of the shared slots and bytes: eight of its bodies of
// 8 MiB each, the budget of all reports in flight, never sent, do not turn another node's
// report away. Its six past the two are answered 503 at once.
func TestOneNodesSlowBodiesLeaveRoomForOthers(t *testing.T) {
	t.Parallel()
	f := setup(t)
	slow := f.node("slow")
	tok, d := f.declared("web-1")
	var mu sync.Mutex
	statuses := map[int]int{}
	var wg sync.WaitGroup
	for range 8 {
		c := f.dial()
		fmt.Fprintf(c, "POST /api/v1/nodes/slow/reports HTTP/1.1\r\nHost: hq\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n{", slow, maxBody)
		wg.Go(func() {
			c.SetReadDeadline(time.Now().Add(2 * time.Second))
			resp, err := http.ReadResponse(bufio.NewReader(c), nil)
			status := 0
			if err == nil {
				resp.Body.Close()
				status = resp.StatusCode
			}
			mu.Lock()
			statuses[status]++
			mu.Unlock()
		})
	}
	wg.Wait()
	if statuses[http.StatusServiceUnavailable] != 6 || statuses[0] != 2 {
		t.Fatalf("the slow node's reports: %v, want 6 answered 503 and 2 still being read", statuses)
	}
	f.want(f.do("POST", "/api/v1/nodes/web-1/reports", tok, appliedReport(d)), 200)
}

// A node reporting far faster than any host does is answered 429 with Retry-After past its
// burst, and its extra reports store nothing; another node reports as before.
func TestANodeReportingTooFastIsTurnedAway(t *testing.T) {
	t.Parallel()
	f := setupWith(t, false, db.Options{}, func(s *Server) { s.NodeReportRate, s.NodeReportBurst = 0.5, 3 })
	tok, d := f.declared("web-1")
	taken, throttled := 0, 0
	for i := range 20 {
		// Each differs from the last, so each taken is stored.
		rep := appliedReport(d)
		if i%2 == 1 {
			rep.Results[0].Outcome, rep.Results[0].Error = hq.StateFailed, "failed"
		}
		r := f.do("POST", "/api/v1/nodes/web-1/reports", tok, rep)
		switch r.status {
		case http.StatusOK:
			taken++
		case http.StatusTooManyRequests:
			throttled++
			if after, err := strconv.Atoi(r.header.Get("Retry-After")); err != nil || after < 1 || after > 2 {
				t.Fatalf("Retry-After %q, want the 1 or 2 s until the bucket holds one", r.header.Get("Retry-After"))
			}
			if code := r.errCode(t); code != hq.CodeTooManyRequests {
				t.Fatalf("code %s", code)
			}
		default:
			t.Fatalf("status %d: %s", r.status, r.body)
		}
	}
	// Three in the burst, and one more if the bucket refilled while the twenty were sent.
	if taken < 3 || taken > 4 || throttled != 20-taken || f.server.Throttled() != int64(throttled) {
		t.Fatalf("%d taken, %d throttled (counted %d)", taken, throttled, f.server.Throttled())
	}
	var reports struct{ Reports []hq.ReportView }
	f.want(f.do("GET", "/api/v1/nodes/web-1/reports?limit=100", admin, nil), 200).json(t, &reports)
	if len(reports.Reports) != taken {
		t.Fatalf("%d reports stored, want the %d taken", len(reports.Reports), taken)
	}
	tok2 := f.node("web-2")
	f.want(f.do("PUT", "/api/v1/nodes/web-2/assignments/app", admin, `{"taken":true}`), 200)
	var d2 hq.Declaration
	f.want(f.do("GET", "/api/v1/nodes/web-2/declaration", tok2, nil), 200).json(t, &d2)
	f.want(f.do("POST", "/api/v1/nodes/web-2/reports", tok2, appliedReport(d2)), 200)
}
