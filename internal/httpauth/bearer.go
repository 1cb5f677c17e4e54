// Package httpauth reads the credentials of an HTTP request.
package httpauth

import (
	"net/http"
	"strings"
)

// Bearer returns the token of the request's "Authorization: Bearer TOKEN"
// header. The scheme's name is matched without regard to case, as RFC
// 9110 says of every authentication scheme.
func Bearer(r *http.Request) (string, bool) {
	scheme, token, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	return strings.TrimLeft(token, " "), true
}
