// Command netget fetches the URL it is given through cairn's network
// import and prints the status and body; an error goes to stderr with
// exit status 1.
package main

import (
	"fmt"
	"io"
	"os"

	"github.com/cairnrun/cairn/guest/nethttp"
)

func main() {
	resp, err := nethttp.Client().Get(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	fmt.Printf("%d %s\n", resp.StatusCode, b)
}
