package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/cairnrun/cairn/host"
	"github.com/cairnrun/cairn/internal/plural"
)

// renderer prints a run's events: readable lines by default, or one JSON
// object per line.
type renderer struct {
	w      io.Writer
	errW   io.Writer // warnings, in readable form
	busy   *progress // the status line between events; nil for none
	json   bool
	inText bool // the last thing printed was streamed model text
	// running counts the round's calls that started and have not ended.
	running int
}

// newRenderer prints events to w, and readable warnings to errW. Readable
// lines go through a terminalWriter: they carry tools' and models' text.
// Each field that must stay on one line is escaped by terminalLine too
// (or oneLine), so that a newline in it cannot forge a line of its own.
// When w is cairn's stdout and its reader goes away, the run goes on, and
// errW is told so once (see dropClosed).
func newRenderer(w, errW io.Writer, asJSON bool) *renderer {
	if d, ok := w.(*dropClosed); ok {
		d.noteOn(errW) // a run outlives a closed stdout: say why it goes on
	}
	if asJSON {
		return &renderer{w: w, errW: errW, json: true}
	}
	return &renderer{w: terminalWriter{w}, errW: terminalWriter{errW}}
}

func (r *renderer) event(e host.Event) {
	r.busy.around(func() { r.print(e) }, r.waiting(e))
}

// waiting is what the run waits for after e: waitingAfter, except that
// while another call of the round still runs (a tool module compiling on
// a first run, say), it is that call.
func (r *renderer) waiting(e host.Event) string {
	switch e.Type {
	case host.EventToolStart:
		r.running++
	case host.EventToolEnd:
		r.running = max(r.running-1, 0)
		if r.running > 0 {
			return waitingAfter(host.Event{Type: host.EventToolStart})
		}
	case host.EventRoundEnd, host.EventRunEnd:
		r.running = 0
	}
	return waitingAfter(e)
}

func (r *renderer) print(e host.Event) {
	if r.json {
		b, err := json.Marshal(e)
		if err == nil {
			fmt.Fprintf(r.w, "%s\n", jsonControls(b))
		}
		return
	}
	r.human(e)
}

func (r *renderer) human(e host.Event) {
	if e.Depth > 0 || e.Type == host.EventTodos {
		r.treeEvent(e) // sub-agents and task lists: see tree.go
		return
	}
	if e.Type != host.EventModelText && r.inText {
		fmt.Fprintln(r.w)
		r.inText = false
	}
	switch e.Type {
	case host.EventRunStart:
		fmt.Fprintf(r.w, "agent %s · run %s\n", terminalLine(e.Agent), e.Run)
	case host.EventModelText:
		if !r.inText {
			fmt.Fprint(r.w, "model: ")
			r.inText = true
		}
		fmt.Fprint(r.w, terminalText(e.Text))
	case host.EventToolStart:
		fmt.Fprintf(r.w, "  → %s %s\n", terminalLine(e.Call.Tool), oneLine(e.Call.Input, 100))
	case host.EventToolEnd:
		mark, out := "✓", e.Call.Output
		switch e.Call.Outcome {
		case host.OutcomeError:
			mark = "✗"
		case host.OutcomeConflict:
			mark, out = "✗", refusedChanges(out)
		case host.OutcomeUnsettled:
			mark, out = "…", "its changes wait for resume to settle them: "+out
		}
		fmt.Fprintf(r.w, "  %s %s (%.1f ms) %s\n", mark, terminalLine(e.Call.Tool), e.Call.DurationMS, oneLine(out, 100))
	case host.EventRoundEnd:
		fmt.Fprintf(r.w, "· round %d done · %s so far\n", e.Round, plural.Count(e.Usage.Total(), "token"))
	case host.EventWarning:
		fmt.Fprintf(r.errW, "cairn: warning: %s\n", terminalLine(e.Text))
	case host.EventRunEnd:
		r.runEnd(e)
	default:
		r.other(e)
	}
}

func (r *renderer) runEnd(e host.Event) {
	line := fmt.Sprintf("%s after %s", e.Status, plural.Count(e.Round, "round"))
	if e.Usage != nil {
		line += " · " + plural.Count(e.Usage.Total(), "token")
	}
	if e.Reason != "" {
		line += " · " + terminalLine(e.Reason)
	}
	fmt.Fprintln(r.w, line)
}

// other prints the events that have no line of their own yet.
func (r *renderer) other(e host.Event) {
	switch e.Type {
	case host.EventCheckpointLoaded:
		fmt.Fprintf(r.w, "loaded agent %s: %s committed, %s\n", terminalLine(e.Agent), plural.Count(e.Round, "round"), plural.Count(e.Messages, "message"))
	case host.EventAgentResumed:
		r.resumed(e)
	case host.EventCheckpointSaved:
		// One per round; the round_end line says enough.
	case host.EventEffectsApplied:
		fmt.Fprintf(r.w, "  ↳ %s changed %s\n", e.Call.ID, terminalLine(strings.Join(e.Paths, ", ")))
	case host.EventContextCompacted:
		fmt.Fprintln(r.w, compactionEvent(e.Compaction))
	case host.EventApprovalRequired:
		fmt.Fprintf(r.w, "  ? %s %s %s needs approval\n", e.Call.ID, terminalLine(e.Call.Tool), oneLine(e.Call.Input, 100))
	case host.EventApprovalDecided:
		line := fmt.Sprintf("  %s %s", e.Status, e.Call.ID)
		if e.Reason != "" {
			line += ": " + terminalLine(e.Reason)
		}
		fmt.Fprintln(r.w, line)
	}
}

// resumed says what resume found in the interrupted round.
func (r *renderer) resumed(e host.Event) {
	fmt.Fprintf(r.w, "resume (%s) from the boundary after round %d\n", e.Strategy, e.Round)
	if len(e.Finished) == 0 && len(e.Sealed) == 0 && len(e.Awaiting) == 0 && len(e.Dropped) == 0 && len(e.Resumed) == 0 {
		fmt.Fprintln(r.w, "  no round was interrupted")
	}
	resumeDetails(r.w, "  ", e)
}

// resumeDetails writes, each line after pre, what resume did with each
// call of the interrupted round.
func resumeDetails(w io.Writer, pre string, e host.Event) {
	for _, id := range e.Applied {
		fmt.Fprintf(w, "%sapplied %s: its result was journaled and its changes not yet applied; they are now\n", pre, id)
	}
	for _, id := range e.Finished {
		fmt.Fprintf(w, "%skept    %s: it had finished; it is not run again\n", pre, id)
	}
	// Manual changes nothing: a delegation it reports would go on, not does.
	for _, id := range e.Resumed {
		if e.Strategy == string(host.StrategyManual) {
			fmt.Fprintf(w, "%sin flight, would be resumed: %s: its tool would keep what it had done (a sub-agent would go on from its last round)\n", pre, id)
			continue
		}
		fmt.Fprintf(w, "%sresumed %s: its tool keeps what it had done (a sub-agent goes on from its last round)\n", pre, id)
	}
	for _, id := range e.Awaiting {
		fmt.Fprintf(w, "%swaiting %s: it needs approval (cairn approve or cairn deny), or has it and runs now\n", pre, id)
	}
	// Likewise a call it reports would be sealed, not is.
	sealed := "sealed "
	if e.Strategy == string(host.StrategyManual) {
		sealed = "in flight, would be sealed:"
	}
	for _, s := range e.Sealed {
		by := sealed
		if s.Earlier {
			by = "sealed by an earlier resume:"
		}
		was := string(s.Phase)
		if s.StoppedBy != "" {
			was += ", stopped by " + s.StoppedBy
		}
		fmt.Fprintf(w, "%s%s %s %s: was %s, effects %s; %s\n", pre, by, s.Call, terminalLine(s.Tool), was, s.Effects, s.Recommendation)
		for _, e := range s.Net {
			fmt.Fprintf(w, "%s        request %d %s %s: %s\n", pre, e.Seq, terminalLine(e.Method), terminalLine(e.URL), terminalLine(e.State()))
		}
	}
	for _, id := range e.Dropped {
		fmt.Fprintf(w, "%sdropped %s: the round changed nothing; the model is asked again\n", pre, id)
	}
}

// refusedChanges is what the note at the end of a conflict's output says
// was refused: one "- path: why" line per change.
func refusedChanges(output string) string {
	note := output[strings.LastIndex(output, "\n\n")+1:]
	var refused []string
	for _, line := range strings.Split(note, "\n") {
		if path, ok := strings.CutPrefix(line, "- "); ok {
			refused = append(refused, path)
		}
	}
	return "refused: " + strings.Join(refused, "; ")
}

// oneLine shortens s to one line of at most n runes, its controls
// escaped (terminalLine): it shows a tool's input or output, or a
// model's text, on a line of cairn's own.
func oneLine(s string, n int) string {
	s = terminalLine(strings.Join(strings.Fields(s), " "))
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
