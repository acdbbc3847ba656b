package node

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/meshhq/hq"
)

// MaxRetryAfter caps how long a Retry-After can make a host wait: a proxy that asks for a day
// must not silence a host for one.
const MaxRetryAfter = time.Hour

// Error is an answer of the controller other than 200 and 304. When the body is the API's
// {"error":{"code","message","details"}} it unwraps to that *hq.Error, so errors.As and
// hq.ErrorCode see the code and the per-field details.
type Error struct {
	// Status is the HTTP status code, StatusText the status line ("422 Unprocessable Entity").
	Status     int
	StatusText string
	// API is the error the body carries; nil when the body is not the API's.
	API *hq.Error
	// RetryAfter is how long the controller asked to wait (Retry-After); 0 when it did not.
	RetryAfter time.Duration
}

// maxDetails bounds the field errors an error's text names; the rest are counted.
const maxDetails = 10

func (e *Error) Error() string {
	s := "controller answered " + e.StatusText
	if e.API == nil {
		return s
	}
	if m := cmp.Or(e.API.Message, string(e.API.Code)); m != "" {
		s += ": " + m
	}
	if n := len(e.API.Details); n > 0 {
		fields := make([]string, 0, min(n, maxDetails)+1)
		for _, d := range e.API.Details[:min(n, maxDetails)] {
			fields = append(fields, d.Field+": "+d.Message)
		}
		if n > maxDetails {
			fields = append(fields, fmt.Sprintf("and %d more", n-maxDetails))
		}
		s += " (" + strings.Join(fields, "; ") + ")"
	}
	return s
}

func (e *Error) Unwrap() error {
	if e.API == nil {
		return nil
	}
	return e.API
}

// Overloaded reports whether err is the controller shedding load (503, or 429 too many
// requests) and how long it asked to wait, if it said.
func Overloaded(err error) (time.Duration, bool) {
	e, ok := errors.AsType[*Error](err)
	if !ok || e.Status != http.StatusServiceUnavailable && e.Status != http.StatusTooManyRequests {
		return 0, false
	}
	return e.RetryAfter, true
}

// refusal reads an answer other than 200 and 304 as an *Error.
func refusal(resp *http.Response, body []byte, retryAfter time.Duration) *Error {
	e := &Error{Status: resp.StatusCode, StatusText: resp.Status, RetryAfter: retryAfter}
	var b struct {
		Error *hq.Error `json:"error"`
	}
	if json.Unmarshal(body[:min(len(body), 64<<10)], &b) == nil && b.Error != nil && (b.Error.Code != "" || b.Error.Message != "") {
		e.API = b.Error
	}
	return e
}

// ParseRetryAfter reads a Retry-After header: seconds, or an HTTP date, at most MaxRetryAfter.
// 0 when absent or unreadable.
func ParseRetryAfter(h string, now time.Time) time.Duration {
	if h == "" {
		return 0
	}
	if n, err := strconv.ParseInt(strings.TrimSpace(h), 10, 64); err == nil {
		if n <= 0 {
			return 0
		}
		return time.Duration(min(n, int64(MaxRetryAfter/time.Second))) * time.Second
	}
	if at, err := http.ParseTime(h); err == nil && at.After(now) {
		return min(at.Sub(now), MaxRetryAfter)
	}
	return 0
}
