// Package bearer reads a request's bearer token (RFC 6750), the one way of giving a token that
// the API and the operator's pages both take.
package bearer

import (
	"net/http"
	"strings"
)

// Token returns the token of r's Authorization header when it uses the Bearer scheme, or ""
// when there is none or the header uses another scheme. The scheme is case-insensitive
// (RFC 9110).
func Token(r *http.Request) string {
	scheme, token, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return ""
	}
	return strings.TrimSpace(token)
}
