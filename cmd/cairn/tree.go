package main

import (
	"fmt"
	"strings"

	"github.com/cairnrun/cairn/host"
	"github.com/cairnrun/cairn/internal/plural"
	"github.com/cairnrun/cairn/internal/view"
)

// treeEvent prints an event of a sub-agent on one line, indented by its
// depth and named by its agent (its streamed text is left to `cairn log`),
// and a task list as it changes.
func (r *renderer) treeEvent(e host.Event) {
	if r.inText && e.Type != host.EventModelText {
		fmt.Fprintln(r.w)
		r.inText = false
	}
	pre := strings.Repeat("  ", e.Depth) + "┆ "
	if e.Depth > 0 {
		pre += e.Agent + " "
	}
	switch e.Type {
	case host.EventRunStart:
		fmt.Fprintf(r.w, "%sstarts (sub-agent of %s) · run %s\n", pre, e.Parent, e.Run)
	case host.EventToolStart:
		fmt.Fprintf(r.w, "%s→ %s %s\n", pre, e.Call.Tool, oneLine(e.Call.Input, 80))
	case host.EventToolEnd:
		mark := "✓"
		if e.Call.Outcome != host.OutcomeOK {
			mark = "✗"
		}
		fmt.Fprintf(r.w, "%s%s %s %s\n", pre, mark, e.Call.Tool, oneLine(e.Call.Output, 80))
	case host.EventApprovalRequired:
		fmt.Fprintf(r.w, "%s? %s %s needs approval (cairn approve %s %s)\n", pre, e.Call.ID, e.Call.Tool, e.Agent, e.Call.ID)
	case host.EventAgentResumed:
		fmt.Fprintf(r.w, "%sresumes from the boundary after round %d\n", pre, e.Round)
		resumeDetails(r.w, pre+"  ", e)
	case host.EventTodos:
		fmt.Fprintf(r.w, "%stasks:\n%s", pre, indent(view.FormatTodos(e.Todos), strings.Repeat("  ", e.Depth)+"  "))
	case host.EventWarning:
		fmt.Fprintf(r.errW, "cairn: warning: %s: %s\n", e.Agent, e.Text)
	case host.EventRunEnd:
		line := fmt.Sprintf("%s%s after %s", pre, e.Status, plural.Count(e.Round, "round"))
		if e.Reason != "" {
			line += ": " + e.Reason
		}
		fmt.Fprintln(r.w, line)
	}
}
