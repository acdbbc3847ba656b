package reportscan

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"
	"unsafe"

	jsonv2 "github.com/go-json-experiment/json"

	"github.com/meshhq/hq"
)

// general is the standard path the scanner is held to: what the controller's general decoder
// does with a report body.
func general(body []byte) (hq.Report, error) {
	var rep hq.Report
	err := jsonv2.Unmarshal(body, &rep, jsonv2.RejectUnknownMembers(true))
	return rep, err
}

// reportSeeds are bodies of the shape hostd writes, and near misses of it.
func reportSeeds() [][]byte {
	full := hq.Report{SendID: 7, Generation: 42, Digest: "sha256:ab", Signature: "c2ln",
		StartedAt: time.Date(2026, 11, 30, 3, 12, 0, 123, time.UTC), FinishedAt: time.Date(2026, 11, 30, 3, 12, 1, 0, time.UTC),
		Refused: &hq.Refusal{Generation: 41, Digest: "sha256:cd", SendID: 6, ComposedBy: "hq:1:x", Reason: "older"},
		Results: []hq.Result{{Module: "app", Resource: "a", Outcome: hq.StateApplied, Attempted: true, Changed: true, DurationMS: 3},
			{Module: "app", Resource: "b", Outcome: hq.StateFailed, Error: "é\nboom", HoldReason: "x", BlockedBy: "app/a", Drift: true, DriftDetail: "missing"},
			{Module: "app", Resource: "web", Outcome: hq.StateApplied, Container: &hq.ContainerStatus{ID: "4f1c", ImageDigest: "sha256:cd",
				StartedAt: time.Date(2026, 11, 30, 3, 11, 0, 0, time.UTC), Restarts: 2, Health: hq.HealthHealthy, Spec: "sha256:ef", EarlierSpec: true}},
			{Module: "app", Resource: "held", Outcome: hq.StateHeld, Container: &hq.ContainerStatus{ID: "77", Health: hq.HealthNone}},
			{Module: "app", Resource: "conf", Outcome: hq.StateHeld, HoldReason: "would overwrite /etc/app.conf", HeldFound: &hq.FoundFile{Text: "theirs\n\tü"}},
			{Module: "app", Resource: "blob", Outcome: hq.StateHeld, HeldFound: &hq.FoundFile{Omitted: hq.FoundBinary}},
			{Module: "app", Resource: "motd", Outcome: hq.StateApplied, Drift: true, DriftDetail: "content", DriftFound: "bye\n"}}}
	b, _ := json.Marshal(full)
	empty, _ := json.Marshal(hq.Report{Results: []hq.Result{}})
	return [][]byte{b, empty,
		[]byte(`{"generation":1,"digest":"d","results":[{"module":"a","resource":"b","outcome":"applied","attempted":true}]}`),
		[]byte(`{"generation":1,"generation":2}`), []byte(`{"Generation":1}`), []byte(`{"generation":1.5}`),
		[]byte(`{"generation":1e3}`), []byte(`{"digest":null,"refused":null}`), []byte(`{"results":[{"extra":1}]}`),
		[]byte(`{} {}`), []byte(`{"started_at":"2026-11-30T03:12:00+01:00"}`), []byte(`{"started_at":"yesterday"}`),
		[]byte("{\"digest\":\"\xff\"}"), []byte(`{"results":null}`), []byte(`[]`), []byte(`{"send_id":-3}`),
		[]byte(`{"results":[{"module":"a","resource":"b","outcome":"applied","container":{"id":"x","image_digest":"sha256:1","started_at":"2026-11-30T03:12:00Z","restarts":3,"health":"none","spec":"s"}}]}`),
		[]byte(`{"results":[{"module":"a","resource":"b","container":null}]}`), []byte(`{"results":[{"container":{"id":"x","id":"y"}}]}`),
		[]byte(`{"results":[{"container":{"restarts":1.5}}]}`), []byte(`{"results":[{"container":{"started_at":null}}]}`),
		[]byte(`{"results":[{"container":{"Health":"none"}}]}`), []byte(`{"results":[{"container":[]}]}`),
		[]byte(`{"results":[{"module":"a","resource":"b","outcome":"held","held_found":{"text":"x\n"}}]}`),
		[]byte(`{"results":[{"module":"a","resource":"b","outcome":"held","held_found":{"text":"","omitted":"too-large"}}]}`),
		[]byte(`{"results":[{"held_found":null}]}`), []byte(`{"results":[{"held_found":{}}]}`),
		[]byte(`{"results":[{"held_found":{"text":"a","text":"b"}}]}`), []byte(`{"results":[{"held_found":{"Text":"a"}}]}`),
		[]byte(`{"results":[{"held_found":{"size":3}}]}`), []byte(`{"results":[{"held_found":"x"}]}`),
		[]byte(`{"results":[{"held_found":{"text":null}}]}`), []byte(`{"results":[{"held_found":{"text":"\u0000\ud800"}}]}`),
		[]byte(`{"results":[{"drift_found":"a\nb"}]}`), []byte(`{"results":[{"drift_found":"a","drift_found":"b"}]}`)}
}

// The scanner accepts exactly what the general decoder accepts, with the same result. It reads
// into results left from an earlier report, as the controller has it do, and none of them may
// show through.
func FuzzScan(f *testing.F) {
	for _, s := range reportSeeds() {
		f.Add(s)
	}
	left := hq.Result{Module: "old", Resource: "left", Outcome: hq.StateFailed, Error: "from before", Drift: true, DurationMS: 9}
	f.Fuzz(func(t *testing.T, body []byte) {
		want, wantErr := general(body)
		used := []hq.Result{left, left, left}
		got, ok := Scan(body, used[:1])
		if ok && wantErr != nil {
			t.Fatalf("the scanner accepted what the general decoder refuses (%v): %q", wantErr, body)
		}
		if ok && !reflect.DeepEqual(got, want) {
			t.Fatalf("the scanner read\n%+v\nthe general decoder\n%+v\nfrom %q", got, want, body)
		}
		checkHeader(t, body, want, wantErr)
	})
}

// checkHeader holds ScanHeader to the general decoder. Of a report the general decoder reads,
// ScanHeader reads the same but for the results (or hands it on), and the bytes it gives for
// them are the results array; of a body the general decoder refuses, whatever ScanHeader reads
// has bytes for results that are no list of results.
func checkHeader(t *testing.T, body []byte, want hq.Report, wantErr error) {
	t.Helper()
	head, raw, ok := ScanHeader(body)
	if !ok {
		return
	}
	var results []hq.Result
	decoded := raw == nil || jsonv2.Unmarshal(raw, &results, jsonv2.RejectUnknownMembers(true)) == nil
	if wantErr != nil {
		if decoded {
			t.Fatalf("ScanHeader read what the general decoder refuses (%v), and its results decode: %q", wantErr, body)
		}
		return
	}
	if !decoded {
		t.Fatalf("ScanHeader took %q for the results of %q, which the general decoder reads", raw, body)
	}
	wantHead := want
	wantHead.Results = nil
	if !reflect.DeepEqual(head, wantHead) {
		t.Fatalf("ScanHeader read\n%+v\nthe general decoder\n%+v\nfrom %q", head, wantHead, body)
	}
	if len(results) != len(want.Results) || len(results) > 0 && !reflect.DeepEqual(results, want.Results) {
		t.Fatalf("ScanHeader's results decode to\n%+v\nthe general decoder read\n%+v\nfrom %q", results, want.Results, body)
	}
}

// ScanHeader agrees with the general decoder on the corpus, and its results are the array's
// exact bytes.
func TestScanHeaderOnTheCorpus(t *testing.T) {
	for _, body := range reportSeeds() {
		want, err := general(body)
		checkHeader(t, body, want, err)
	}
	body := []byte(`{"generation":3,"results":[{"module":"a","resource":"b\"]}","outcome":"applied"}] ,"digest":"d"}`)
	head, raw, ok := ScanHeader(body)
	if !ok || head.Generation != 3 || head.Digest != "d" || string(raw) != `[{"module":"a","resource":"b\"]}","outcome":"applied"}]` {
		t.Fatalf("ScanHeader(%s) = %+v, %s, %v", body, head, raw, ok)
	}
	for _, bad := range []string{`{"results":[`, `{"results":[}`, `{"results":"x"}`, `{"results":[{"a":"]"]`, `{"results":[]`} {
		if _, _, ok := ScanHeader([]byte(bad)); ok {
			t.Errorf("ScanHeader took %s", bad)
		}
	}
}

// BenchmarkScanHeader500 reads a 500-result report's header and passes over its results.
//
//	go test ./api/reportscan -run '^$' -bench ScanHeader500
func BenchmarkScanHeader500(b *testing.B) {
	rep := hq.Report{SendID: 7, Generation: 42, Digest: "sha256:" + strings.Repeat("ab", 32), Results: make([]hq.Result, 500)}
	for i := range rep.Results {
		rep.Results[i] = hq.Result{Module: "app", Resource: fmt.Sprintf("etc-app-f%03d", i), Outcome: hq.StateApplied, DurationMS: 1}
	}
	body, _ := json.Marshal(rep)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if _, _, ok := ScanHeader(body); !ok {
			b.Fatal("not read")
		}
	}
}

// The shape hostd writes takes the scanner's path.
func TestHostdShapedReportsTakeTheFastPath(t *testing.T) {
	seeds := reportSeeds()
	for _, s := range append(append(seeds[:3:3], seeds[16:18]...), seeds[23:25]...) {
		if _, ok := Scan(s, nil); !ok {
			t.Errorf("the scanner handed on %s", s)
		}
	}
}

// BenchmarkDecodeReport500 reads a 500-result report of the shape hostd writes.
//
//	go test ./api/reportscan -run '^$' -bench DecodeReport500
func BenchmarkDecodeReport500(b *testing.B) {
	rep := hq.Report{SendID: 7, Generation: 42, Digest: "sha256:" + strings.Repeat("ab", 32), Results: make([]hq.Result, 500)}
	for i := range rep.Results {
		rep.Results[i] = hq.Result{Module: "app", Resource: fmt.Sprintf("etc-app-f%03d", i), Outcome: hq.StateApplied, DurationMS: 1}
	}
	body, _ := json.Marshal(rep)
	b.SetBytes(int64(len(body)))
	buf := make([]hq.Result, 0, 512)
	for b.Loop() {
		got, ok := Scan(body, buf)
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
	first, ok := Scan(body, buf)
	if !ok {
		t.Fatal("not read")
	}
	name := first.Results[7].Resource
	allocs := testing.AllocsPerRun(20, func() {
		again, _ := Scan(body, buf)
		if again.Results[7].Resource != name || unsafe.StringData(again.Results[7].Resource) != unsafe.StringData(name) {
			t.Fatalf("read %q again as another string", name)
		}
	})
	if allocs > 10 {
		t.Errorf("%.0f allocations to read 500 results whose names are known, want at most 10", allocs)
	}
}

// A corpus of whole reports, as hostd writes them and as other clients might: each is read by
// the scanner, and read as the general decoder reads it.
func TestScanAgreesWithTheGeneralDecoderOnACorpus(t *testing.T) {
	var corpus [][]byte
	for _, n := range []int{0, 1, 500} {
		rep := hq.Report{SendID: int64(n), Generation: 3, Digest: "sha256:" + strings.Repeat("0f", 32),
			StartedAt: time.Date(2026, 12, 1, 0, 0, 0, 5, time.UTC), FinishedAt: time.Date(2026, 12, 1, 0, 0, 1, 0, time.UTC),
			Results: make([]hq.Result, n)}
		for i := range rep.Results {
			rep.Results[i] = hq.Result{Module: "m" + fmt.Sprint(i%3), Resource: fmt.Sprintf("r-%d", i), Outcome: hq.StateApplied,
				Attempted: i%2 == 0, Changed: i%5 == 0, DurationMS: int64(i), Note: strings.Repeat("ü", i%4)}
			if i%11 == 3 {
				rep.Results[i].Outcome, rep.Results[i].HoldReason = hq.StateHeld, "would overwrite /etc/r, found on this node"
				rep.Results[i].HeldFound = &hq.FoundFile{Text: strings.Repeat("line \"ü\"\n", i%5)}
				if i%2 == 0 {
					rep.Results[i].HeldFound = &hq.FoundFile{Omitted: hq.FoundTooMany}
				}
			}
			if i%7 == 0 {
				rep.Results[i].Container = &hq.ContainerStatus{ID: fmt.Sprintf("%064x", i), ImageDigest: "sha256:" + strings.Repeat("1e", 32),
					StartedAt: time.Unix(int64(1796611922+i), 0).UTC(), Restarts: int64(i % 3), Health: hq.HealthHealthy,
					Spec: "sha256:" + strings.Repeat("5c", 32), EarlierSpec: i%2 == 1}
			}
		}
		compact, _ := json.Marshal(rep)
		indented, _ := json.MarshalIndent(rep, "", "\t")
		corpus = append(corpus, compact, indented)
	}
	for _, body := range corpus {
		want, err := general(body)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := Scan(body, nil)
		if !ok {
			t.Fatalf("the scanner handed on a body of hostd's shape: %.200s", body)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("the scanner read\n%+v\nthe general decoder\n%+v", got, want)
		}
	}
}

// Hostile bodies are handed on or read as the general decoder reads them, never accepted where
// it refuses, and never crash the scanner.
func TestScanOnHostileInput(t *testing.T) {
	deep := strings.Repeat(`{"results":[`, 10000)
	for _, body := range []string{
		"", "{", `{"results":[{"module":"a"`, deep, `{"digest":"` + strings.Repeat(`\u0000`, 1000) + `"}`,
		`{"digest":"\ud800"}`, `{"send_id":99999999999999999999}`, `{"results":[` + strings.Repeat(`{},`, 5000) + `{}]}`,
		"{\"digest\":\"a\x00b\"}", `{"results":[{"resource":"\u00e9"}]}`, `{"generation":-0}`, `{"generation":01}`,
	} {
		want, wantErr := general([]byte(body))
		got, ok := Scan([]byte(body), nil)
		if ok && (wantErr != nil || !reflect.DeepEqual(got, want)) {
			t.Errorf("the scanner accepted %.60q as %+v; the general decoder: %+v, %v", body, got, want, wantErr)
		}
	}
}
