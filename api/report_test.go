package api

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/meshhq/hq"
)

// reportSeeds are bodies of the shape hostd writes, and near misses of it.
func reportSeeds() [][]byte {
	full := hq.Report{SendID: 7, Generation: 42, Digest: "sha256:ab", Signature: "c2ln",
		StartedAt: time.Date(2026, 11, 30, 3, 12, 0, 123, time.UTC), FinishedAt: time.Date(2026, 11, 30, 3, 12, 1, 0, time.UTC),
		Refused: &hq.Refusal{Generation: 41, Digest: "sha256:cd", SendID: 6, ComposedBy: "hq:1:x", Reason: "older"},
		Results: []hq.Result{{Module: "app", Resource: "a", Outcome: hq.StateApplied, Attempted: true, Changed: true, DurationMS: 3},
			{Module: "app", Resource: "b", Outcome: hq.StateFailed, Error: "é\nboom", HoldReason: "x", BlockedBy: "app/a", Drift: true, DriftDetail: "missing"}}}
	b, _ := json.Marshal(full)
	empty, _ := json.Marshal(hq.Report{Results: []hq.Result{}})
	return [][]byte{b, empty,
		[]byte(`{"generation":1,"digest":"d","results":[{"module":"a","resource":"b","outcome":"applied","attempted":true}]}`),
		[]byte(`{"generation":1,"generation":2}`), []byte(`{"Generation":1}`), []byte(`{"generation":1.5}`),
		[]byte(`{"generation":1e3}`), []byte(`{"digest":null,"refused":null}`), []byte(`{"results":[{"extra":1}]}`),
		[]byte(`{} {}`), []byte(`{"started_at":"2026-11-30T03:12:00+01:00"}`), []byte(`{"started_at":"yesterday"}`),
		[]byte("{\"digest\":\"\xff\"}"), []byte(`{"results":null}`), []byte(`[]`), []byte(`{"send_id":-3}`)}
}

// The token reader accepts exactly what the general decoder accepts, with the same result;
// whatever it hands on is decoded by the general decoder. It reads into results left from an
// earlier report, as the handler has it do, and none of them may show through.
func FuzzDecodeReport(f *testing.F) {
	for _, s := range reportSeeds() {
		f.Add(s)
	}
	left := hq.Result{Module: "old", Resource: "left", Outcome: hq.StateFailed, Error: "from before", Drift: true, DurationMS: 9}
	f.Fuzz(func(t *testing.T, body []byte) {
		var want hq.Report
		wantErr := unmarshal(body, &want)
		used := []hq.Result{left, left, left}
		got, ok := fastReport(body, used[:1])
		if ok && wantErr != nil {
			t.Fatalf("the token reader accepted what the general decoder refuses (%v): %q", wantErr, body)
		}
		if ok && !reflect.DeepEqual(got, want) {
			t.Fatalf("the token reader read\n%+v\nthe general decoder\n%+v\nfrom %q", got, want, body)
		}
		if _, err := decodeReport(body, nil, false); (err == nil) != (wantErr == nil) {
			t.Fatalf("decodeReport error %v, general decoder %v", err, wantErr)
		}
	})
}

// The shape hostd writes takes the token reader's path.
func TestHostdShapedReportsTakeTheFastPath(t *testing.T) {
	for _, s := range reportSeeds()[:3] {
		if _, ok := fastReport(s, nil); !ok {
			t.Errorf("the token reader handed on %s", s)
		}
	}
}

// BenchmarkDecodeReport500 reads a 500-result report of the shape hostd writes.
//
//	go test ./api -run '^$' -bench DecodeReport500
func BenchmarkDecodeReport500(b *testing.B) {
	rep := hq.Report{SendID: 7, Generation: 42, Digest: "sha256:" + strings.Repeat("ab", 32), Results: make([]hq.Result, 500)}
	for i := range rep.Results {
		rep.Results[i] = hq.Result{Module: "app", Resource: fmt.Sprintf("etc-app-f%03d", i), Outcome: hq.StateApplied, DurationMS: 1}
	}
	body, _ := json.Marshal(rep)
	b.SetBytes(int64(len(body)))
	buf := make([]hq.Result, 0, 512)
	for b.Loop() {
		got, ok := fastReport(body, buf)
		if !ok || len(got.Results) != 500 {
			b.Fatal("not read")
		}
	}
}

// The names of resources reports carried before are not allocated again: a fleet's reports
// name the same resources over and over.
func TestKnownResourceNamesAreNotAllocatedAgain(t *testing.T) {
	rep := hq.Report{Generation: 1, Digest: "d", Results: make([]hq.Result, 500)}
	for i := range rep.Results {
		rep.Results[i] = hq.Result{Module: "app", Resource: fmt.Sprintf("known-%03d", i), Outcome: hq.StateApplied}
	}
	body, _ := json.Marshal(rep)
	buf := make([]hq.Result, 0, 512)
	first, ok := fastReport(body, buf)
	if !ok {
		t.Fatal("not read")
	}
	name := first.Results[7].Resource
	allocs := testing.AllocsPerRun(20, func() {
		again, _ := fastReport(body, buf)
		if again.Results[7].Resource != name || unsafe.StringData(again.Results[7].Resource) != unsafe.StringData(name) {
			t.Fatalf("read %q again as another string", name)
		}
	})
	if allocs > 10 {
		t.Errorf("%.0f allocations to read 500 results whose names are known, want at most 10", allocs)
	}
}
