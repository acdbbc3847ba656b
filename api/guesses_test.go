package api

import (
	"net/http"
	"strconv"
	"testing"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/db"
	"github.com/meshhq/hq/internal/guesses"
)

// Tokens that are nobody's, from one address, past the bound are answered 429 with
// Retry-After before the token is looked at: even the right one, so a guess past the bound
// learns nothing. A node's token sent for another node is no guess, and is not counted.
func TestWrongTokensFromOneAddressAreBounded(t *testing.T) {
	t.Parallel()
	f := setupWith(t, false, db.Options{}, func(s *Server) { s.Guesses = guesses.New(3) })
	tok := f.node("web-1")
	f.node("web-2")
	for range 5 {
		f.want(f.do("GET", "/api/v1/nodes/web-2/declaration", tok, nil), 403)
	}
	for range 3 {
		f.want(f.do("GET", "/api/v1/status", "guess", nil), 401)
	}
	for _, path := range []string{"/api/v1/status", "/api/v1/nodes/web-1/declaration"} {
		for _, token := range []string{"guess", admin} {
			r := f.want(f.do("GET", path, token, nil), 429)
			if after, err := strconv.Atoi(r.header.Get("Retry-After")); err != nil || after < 1 || after > 20 {
				t.Fatalf("Retry-After %q", r.header.Get("Retry-After"))
			}
			if code := r.errCode(t); code != hq.CodeTooManyRequests {
				t.Fatalf("code %s", code)
			}
		}
	}
}

// Every JSON answer says nosniff: those of handlers, of errors, and the lot's.
func TestJSONAnswersSayNosniff(t *testing.T) {
	t.Parallel()
	f := setup(t)
	tok := f.node("web-1")
	for _, r := range []response{
		f.want(f.do("GET", "/api/v1/status", admin, nil), 200),
		f.want(f.do("GET", "/api/v1/status", "", nil), 401),
		f.want(f.do("GET", "/api/v1/nodes/web-1/declaration", tok, nil), 200),
		f.want(f.do("GET", "/healthz", "", nil), 200),
	} {
		if r.header.Get("X-Content-Type-Options") != "nosniff" {
			t.Fatalf("%d answer without nosniff: %v", r.status, r.header)
		}
	}
	// A parked poll's answer, composed by the lot.
	f.want(f.do("PUT", "/api/v1/modules/app", admin, appModule), 201)
	_, rd := f.rawPoll("web-1", tok, "after=0&wait=5s")
	f.waitParked(1)
	f.want(f.do("PUT", "/api/v1/nodes/web-1/assignments/app", admin, nil), 200)
	resp, err := http.ReadResponse(rd, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("X-Content-Type-Options") != "nosniff" {
		t.Fatalf("the lot's answer: %d %v", resp.StatusCode, resp.Header)
	}
}
