// Command nettool is a tool module that reaches the network through the
// host with net/http, for the host's tests of the network grant.
package main

import (
	"fmt"
	"io"

	"github.com/cairnrun/cairn/abi"
	"github.com/cairnrun/cairn/guest"
	"github.com/cairnrun/cairn/guest/nethttp"
)

type httpIn struct {
	Method string `json:"method,omitempty" desc:"GET, POST..."`
	URL    string `json:"url" desc:"the URL"`
	Body   string `json:"body,omitempty" desc:"the request body"`
}

func main() {
	guest.Main(
		guest.Define("http", "Sends one HTTP request (following redirects) and answers with the status and body.",
			func(c *guest.Call, in httpIn) (string, error) {
				req, err := newRequest(in)
				if err != nil {
					return "", err
				}
				resp, err := nethttp.Client().Do(req)
				if err != nil {
					return "", err
				}
				defer resp.Body.Close()
				b, err := io.ReadAll(resp.Body)
				if err != nil {
					return "", err
				}
				return fmt.Sprintf("%d %s", resp.StatusCode, b), nil
			}, guest.Needs(abi.Needs{Net: []string{"127.0.0.1"}})),
	)
}
