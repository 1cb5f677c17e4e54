package web

import (
	"encoding/json"
	"net"

	"github.com/cairnrun/cairn/internal/netanswer"
)

// Listener is ln whose connections answer, in the API's JSON, the errors
// net/http answers itself before any handler runs, in plain text (see
// netanswer.Listener): a request line or header that does not parse, a
// header too large, a Transfer-Encoding or HTTP version it does not read.
func Listener(ln net.Listener) net.Listener {
	return netanswer.Listener(ln, "docs/http-api.md describes the routes", func(msg string) []byte {
		body, _ := json.Marshal(apiError{Error: msg})
		return body
	})
}
