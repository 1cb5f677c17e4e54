package host_test

import (
	"fmt"
	"log"

	"github.com/cairnrun/cairn/host"
)

// Verify runs each recorded call again, in a fresh instance of the same
// module on what the call saw, and compares output and changes.
func ExampleEngine_Verify() {
	x := newExample()
	defer x.close()
	x.runHello("hello-1")

	rep, err := x.eng.Verify(x.ctx, "hello-1", host.VerifyOptions{Round: 2})
	if err != nil {
		log.Fatal(err)
	}
	for _, c := range rep.Calls {
		fmt.Println("round", c.Round, c.Tool, c.Status)
	}
	fmt.Println(rep.Diverged, "diverged")
	// Output:
	// round 2 read_file match
	// round 2 text_stats match
	// 0 diverged
}
