package api

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// readAll reads what the body holds, whatever its Content-Length says: the length is only
// where the buffer starts.
func TestReadAllReadsWhatTheBodyHolds(t *testing.T) {
	body := strings.Repeat("x", 10_000)
	for _, size := range []int64{-1, 0, 1, 9_999, 10_000, 10_001, 50_000, maxBody + 1} {
		for name, r := range map[string]io.Reader{
			"whole":    strings.NewReader(body),
			"one byte": iotest.OneByteReader(strings.NewReader(body)),
			"half":     iotest.HalfReader(strings.NewReader(body)),
		} {
			got, err := readAll(r, size, nil)
			if err != nil || !bytes.Equal(got, []byte(body)) {
				t.Errorf("size %d, %s: %d bytes, %v", size, name, len(got), err)
			}
		}
	}
	if _, err := readAll(iotest.ErrReader(io.ErrUnexpectedEOF), 10, nil); err != io.ErrUnexpectedEOF {
		t.Errorf("a failing body: %v", err)
	}
}

// A body of the size it says is read into one buffer of that size.
func TestReadAllAllocatesTheBodyOnce(t *testing.T) {
	body := []byte(strings.Repeat("x", 55_000))
	rd := bytes.NewReader(body)
	allocs := testing.AllocsPerRun(20, func() {
		rd.Reset(body)
		readAll(rd, int64(len(body)), nil)
	})
	if allocs > 1 {
		t.Errorf("%.0f allocations, want 1", allocs)
	}
}
