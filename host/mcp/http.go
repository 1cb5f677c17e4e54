package mcp

import (
	"crypto/subtle"
	"errors"
	"fmt"
	"github.com/cairnrun/cairn/internal/httpauth"
	"net"
	"net/http"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// ErrTokenRequired: an address other than loopback was given without a
// bearer token.
var ErrTokenRequired = errors.New("serving beyond this machine needs a bearer token")

// CheckAddr refuses to serve HTTP on an address other machines can reach
// (anything but a loopback address or "localhost", including an empty
// host such as ":8080") without a token.
func CheckAddr(addr, token string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("address %q: %w (want HOST:PORT, e.g. 127.0.0.1:8080)", addr, err)
	}
	if token != "" || isLoopback(host) {
		return nil
	}
	return fmt.Errorf("address %q is not loopback: %w; pass --token (clients send \"Authorization: Bearer TOKEN\") or serve on 127.0.0.1",
		addr, ErrTokenRequired)
}

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Handler serves the server over MCP's Streamable HTTP transport. With a
// token, a request without "Authorization: Bearer TOKEN" is refused with
// 401.
func (s *Server) Handler(token string) http.Handler {
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s.srv }, nil)
	if token == "" {
		return h
	}
	return requireToken(token, h)
}

func requireToken(token string, next http.Handler) http.Handler {
	want := []byte(token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, ok := httpauth.Bearer(r)
		if !ok || subtle.ConstantTimeCompare([]byte(got), want) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="cairn"`)
			http.Error(w, "cairn mcp: missing or wrong bearer token", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}
