package main

import (
	"context"
	"errors"
	"io"
	"testing"

	"github.com/cairnrun/cairn/host"
)

// Regression: in `cairn chat` on a terminal, an approval prompt stopped
// with Ctrl-C left its read of the input running beside the chat's own,
// both on one buffer: the next line typed at the chat's prompt went to the
// stopped prompt and was lost, and the two reads raced on the buffer. The
// chat and its prompts now read through one lineReader, and the line typed
// after the stop reaches the chat.
func TestAChatLineTypedAfterAStoppedApprovalPromptReachesTheChat(t *testing.T) {
	in, typing := io.Pipe()
	defer typing.Close()
	lines := newLineReader(in)
	var out promptLog
	ask := promptApprover(lines, &out)
	stopped, stop := context.WithCancel(context.Background())
	asked := make(chan error, 1)
	go func() {
		_, err := ask(stopped, host.ApprovalRequest{Call: host.Call{ID: "call_1_0", Tool: "write_file", Input: `{}`}})
		asked <- err
	}()
	waitPrompts(t, &out, 1)
	stop()
	if err := <-asked; !errors.Is(err, context.Canceled) {
		t.Fatalf("stopped prompt: %v, want context.Canceled", err)
	}
	go typing.Write([]byte("what did you change?\n"))
	line, err := lines.next(context.Background())
	if line != "what did you change?\n" || err != nil {
		t.Fatalf("the chat read %q, %v; want the line typed after the stop", line, err)
	}
	go typing.Write([]byte("y\n"))
	d, err := ask(context.Background(), host.ApprovalRequest{Call: host.Call{ID: "call_2_0", Tool: "write_file", Input: `{}`}})
	if err != nil || !d.Approved {
		t.Fatalf("the next prompt: %+v, %v; want the y typed after it", d, err)
	}
}
