package main

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"golang.org/x/term"

	"github.com/cairnrun/cairn/host"
)

// progressDelay is how long work goes on with nothing printed before the
// status line says what it is waiting for: quick steps show nothing.
const progressDelay = time.Second

// progress says on a terminal what long work is doing while nothing else is
// printed (the first run of a tool module compiles it for seconds; a round
// that changed many files applies them; gc reads every agent): one status
// line on stderr, redrawn as time passes and erased before the next line
// of output. A nil *progress, which newProgress gives for --json or when
// stderr is not a terminal, prints nothing.
type progress struct {
	mu    sync.Mutex
	w     io.Writer
	what  string // what is being waited for; "" shows nothing
	since time.Time
	shown int // the seconds the line on screen shows; 0 for no line
	stop  chan struct{}
	// compiling reports whether tool modules are compiling meanwhile;
	// nil for never.
	compiling func() bool
}

// compilingNote is what the status line adds while tool modules compile:
// a first run on a machine (or after an upgrade) compiles them for seconds.
const compilingNote = "compiling the tool modules for this machine (the first run only; later runs load them from the cache)"

// watchCompiling makes the status line say when tool modules compile.
func (p *progress) watchCompiling(compiling func() bool) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.compiling = compiling
}

// newProgress starts a status line on errW if it is a terminal and the
// output is not JSON; nil otherwise.
func newProgress(errW io.Writer, asJSON bool) *progress {
	f, ok := errW.(*os.File)
	if asJSON || !ok || !term.IsTerminal(int(f.Fd())) {
		return nil
	}
	p := &progress{w: errW, stop: make(chan struct{})}
	go p.run()
	return p
}

func (p *progress) run() {
	t := time.NewTicker(250 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-p.stop:
			return
		case now := <-t.C:
			p.tick(now)
		}
	}
}

// tick draws the status line if its work has gone on long enough.
func (p *progress) tick(now time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	secs := int(now.Sub(p.since).Seconds())
	if p.what == "" || now.Sub(p.since) < progressDelay || secs == p.shown {
		return
	}
	what := p.what
	if p.compiling != nil && p.compiling() {
		what += "; " + compilingNote
	}
	fmt.Fprintf(p.w, "\r\033[K⋯ %s (%ds)", what, secs)
	p.shown = secs
}

// set names the work that goes on now, erasing the line shown.
func (p *progress) set(what string) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.erase()
	p.what, p.since = what, time.Now()
}

// around erases the status line, runs print, and names the work after it.
func (p *progress) around(print func(), next string) {
	if p == nil {
		print()
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.erase()
	print()
	p.what, p.since = next, time.Now()
}

func (p *progress) erase() {
	if p.shown != 0 {
		fmt.Fprint(p.w, "\r\033[K")
		p.shown = 0
	}
}

// close erases the line and stops redrawing it.
func (p *progress) close() {
	if p == nil {
		return
	}
	close(p.stop)
	p.set("")
}

// waitingAfter is what a run waits for after event e, as the status line
// says it; "" while the model's text streams or a person is asked.
func waitingAfter(e host.Event) string {
	switch e.Type {
	case host.EventRunStart, host.EventCheckpointLoaded, host.EventAgentResumed, host.EventRoundEnd, host.EventApprovalDecided:
		return "waiting for the model"
	case host.EventModelTurn:
		return "starting the tools"
	case host.EventToolStart:
		return "running tools"
	case host.EventToolEnd, host.EventEffectsApplied:
		return "finishing the round: applying changes, committing it"
	}
	return ""
}
