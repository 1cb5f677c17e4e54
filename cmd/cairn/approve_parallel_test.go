package main

import (
	"context"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairnrun/cairn/host"
)

// promptLog is what the approver writes, to watch for its prompts.
type promptLog struct {
	mu sync.Mutex
	b  strings.Builder
}

func (p *promptLog) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.b.Write(b)
}

func (p *promptLog) prompts() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []string
	for _, l := range strings.SplitAfter(p.b.String(), "[y/N, or why not] ") {
		if strings.HasSuffix(l, "[y/N, or why not] ") {
			out = append(out, l)
		}
	}
	return out
}

// waitPrompts waits until the approver has shown n prompts, and checks
// that it shows no more for a while.
func waitPrompts(t *testing.T, p *promptLog, n int) []string {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); len(p.prompts()) < n; {
		if time.Now().After(deadline) {
			t.Fatalf("%d prompts shown, want %d: %q", len(p.prompts()), n, p.prompts())
		}
		time.Sleep(time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond)
	if got := p.prompts(); len(got) != n {
		t.Fatalf("%d prompts shown at once, want %d: %q", len(got), n, got)
	}
	return p.prompts()
}

// Regression: two sub-agents running in parallel that both asked for
// approval on the terminal had their prompts printed together, and each
// line the person typed went to whichever of the two read it first: a "y"
// meant for the call on the screen could approve the other one. One
// prompt is shown at a time, and the answer typed after it decides its
// call; a prompt that ends before its answer (the run is stopped) hands
// the line being read to the next prompt rather than leaving two readers.
func TestParallelApprovalPromptsAskOneAtATime(t *testing.T) {
	in, typing := io.Pipe()
	defer typing.Close()
	var out promptLog
	ask := promptApprover(newLineReader(in), &out)
	calls := map[string]string{"call_1_0": `{"path":"alpha.txt"}`, "call_1_1": `{"path":"beta.txt"}`}
	decided := make(chan map[string]host.Decision, 2)
	stopped, stop := context.WithCancel(context.Background())
	go func() {
		// A prompt whose run is stopped before it is answered.
		ask(stopped, host.ApprovalRequest{Call: host.Call{ID: "call_0_0", Tool: "write_file", Input: `{}`}})
	}()
	waitPrompts(t, &out, 1)
	stop()
	time.Sleep(50 * time.Millisecond)
	for id, input := range calls {
		go func() {
			d, err := ask(context.Background(), host.ApprovalRequest{Call: host.Call{ID: id, Tool: "write_file", Input: input}})
			if err != nil {
				t.Errorf("%s: %v", id, err)
			}
			decided <- map[string]host.Decision{id: d}
		}()
	}
	first := waitPrompts(t, &out, 2)[1]
	io.WriteString(typing, "y\n")
	second := waitPrompts(t, &out, 3)[2]
	io.WriteString(typing, "no\n")
	got := map[string]host.Decision{}
	for range 2 {
		for id, d := range <-decided {
			got[id] = d
		}
	}
	for id := range calls {
		switch {
		case strings.Contains(first, id) && !got[id].Approved:
			t.Errorf("%s was shown first and answered y, and was not approved: %+v", id, got[id])
		case strings.Contains(second, id) && got[id].Approved:
			t.Errorf("%s was shown second and answered no, and was approved", id)
		}
	}
}

// Regression: input that ended at an approval prompt (Ctrl-D, or a
// terminal that went away) was taken for a denial, journaled as "a person
// denied it" though no one had answered, and so was every later prompt
// of the run, at once. It decides nothing: the call waits for `cairn
// approve` or `cairn deny`, as in a run with no terminal.
func TestApprovalPromptAtEndOfInputDecidesNothing(t *testing.T) {
	var out promptLog
	ask := promptApprover(newLineReader(strings.NewReader("y\n")), &out)
	req := host.ApprovalRequest{Call: host.Call{ID: "call_1_0", Tool: "write_file", Input: `{"path":"a"}`}}
	if d, err := ask(context.Background(), req); err != nil || !d.Approved {
		t.Fatalf("the answer y: %+v, %v; want approved", d, err)
	}
	for i := range 2 {
		if d, err := ask(context.Background(), req); !errors.Is(err, host.ErrNoDecision) {
			t.Fatalf("prompt %d at the end of input: %+v, %v; want no decision", i+2, d, err)
		}
	}
}
