package host

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/cairnrun/cairn/checkpoint/conversation"

	"github.com/cairnrun/cairn/host/model"
)

// summarySystem is the system prompt of a summary request; %d is the
// words the summary may run to.
const summarySystem = "You condense the earlier part of an agent's conversation so that the agent can go on with its task " +
	"without it. Keep what the agent still needs: the task, what it decided and why, facts it learned, files it read or " +
	"changed, and what is left to do. Fold the new part into the summary so far, if there is one. Answer with the summary " +
	"alone, in plain prose, in at most %d words."

// summarize has the model fold the window's oldest rounds, up to message
// goal at most, into the last cut's summary, in one request within the
// budget. It returns where the rounds it folded end (a round start), the
// summary, capped, and what the request cost.
//
// # Errors
//
// The model's error, wrapped to say that nothing was cut: model.ErrUnavailable
// pauses the run, any other error fails it; an empty summary.
func (r *run) summarize(ctx context.Context, w *window, goal int) (int, string, *conversation.Usage, error) {
	old := ""
	if c := r.state().LastCompaction(); c != nil {
		old = c.Summary
	}
	words := w.spec.summaryCap() * 3 / 4
	req := model.Request{Model: r.modelName, System: fmt.Sprintf(summarySystem, words),
		MaxTokens: w.spec.summaryCap(), Purpose: model.PurposeSummary}
	room := w.spec.Budget - model.EstimateRequest(req) - model.Overhead
	task := ""
	if st := r.state(); w.task >= 0 && w.task < w.from {
		task = st.Messages[w.task].Text
	}
	text, end := w.transcript(task, old, goal, room)
	req.Messages = []conversation.Message{{Role: conversation.RoleUser, Text: text}}
	resp, err := r.provider.Complete(ctx, req)
	if err == nil && strings.TrimSpace(resp.Message.Text) == "" {
		err = errors.New("the model's summary is empty")
	}
	if err != nil {
		return 0, "", nil, fmt.Errorf("context: summarise messages %d to %d to keep the request within context.budget %d: %w; nothing was cut and the journal keeps every message (resume to try again, or set context.policy: drop)",
			w.from+1, end, w.spec.Budget, err)
	}
	usage := resp.Usage
	return end, cutText(strings.TrimSpace(resp.Message.Text), w.spec.summaryCap()), &usage, nil
}

// transcript writes the agent's task (when a cut left it behind), the
// summary so far and the window's rounds up to message goal as text of at
// most room estimated tokens, and returns it with the index in
// State.Messages where the rounds it holds end. It holds one round at
// least, cut if that alone is too long.
func (w *window) transcript(task, old string, goal, room int) (string, int) {
	var b strings.Builder
	used := 0
	write := func(s string) {
		b.WriteString(s)
		used += model.EstimateTokens(s) // the parts' estimates add up to at least the whole's
	}
	if task != "" {
		write("The agent's task:\n" + cutText(task, room/4) + "\n\n")
	}
	if old != "" {
		// Cut to the summary's cap, which a budget lowered since it was
		// made (resume --upgrade) lowers with it.
		write("The summary so far:\n" + cutText(old, w.spec.summaryCap()) + "\n\nThe conversation that follows it:\n")
	} else {
		write("The conversation to summarise:\n")
	}
	end, last := w.from, w.heads+goal-w.from
	for i := w.heads; i < last; {
		j := i + 1
		for j < last && !w.roundStart(j) {
			j++
		}
		text := renderRound(w.msgs[i:j])
		if t := model.EstimateTokens(text); used+t > room {
			if end > w.from {
				break
			}
			text = cutText(text, room-used)
		}
		write(text)
		end, i = w.abs(j), j
	}
	return b.String(), end
}

// renderRound writes a round's messages as lines of a transcript.
func renderRound(msgs []conversation.Message) string {
	var b strings.Builder
	for _, m := range msgs {
		switch m.Role {
		case conversation.RoleUser:
			fmt.Fprintf(&b, "user: %s\n", m.Text)
		case conversation.RoleAssistant:
			if m.Text != "" {
				fmt.Fprintf(&b, "agent: %s\n", m.Text)
			}
			for _, c := range m.ToolCalls {
				fmt.Fprintf(&b, "agent calls %s %s\n", c.Name, c.Input)
			}
		case conversation.RoleTool:
			what := "result"
			if m.IsError {
				what = "error"
			}
			fmt.Fprintf(&b, "%s of %s: %s\n", what, m.ToolName, m.Text)
		}
	}
	return b.String()
}

// readers are the built-in tools a cut result's note may point to, when
// the request offers them: read_file, which reads a file in parts of
// lines, and grep. A tool of the same name from another module may take
// other arguments, and is not one of them.
type readers struct{ readFile, grep bool }

// readersIn are the readers among tools, each the built-in tool itself:
// its name, description and input schema.
func readersIn(tools []model.Tool) readers {
	var rd readers
	wasm, _ := embeddedWasm(BuiltinModule)
	m, err := moduleOf(ToolRef{Module: BuiltinModule}, wasm)
	if err != nil {
		return rd
	}
	for _, b := range offered(m) {
		if !slices.ContainsFunc(tools, func(t model.Tool) bool {
			return t.Name == b.Name && t.Description == b.Description && bytes.Equal(t.InputSchema, b.InputSchema)
		}) {
			continue
		}
		switch b.Name {
		case "read_file":
			rd.readFile = true
		case "grep":
			rd.grep = true
		}
	}
	return rd
}

// hint is what the note on a cut result says of reading more, when the
// line at the cut is line bytes long, longer than what is shown if long.
func (rd readers) hint(line int, long bool) string {
	switch {
	case long && rd.readFile:
		return fmt.Sprintf(longLineHint+": read_file, which reads whole lines, would show it cut again.", line)
	case long:
		return fmt.Sprintf(longLineHint+".", line)
	case rd.readFile && rd.grep:
		return " To read more, ask for a smaller part (read_file takes offset and limit, in lines) or search for what you need (grep)."
	case rd.readFile:
		return " To read more, ask for a smaller part (read_file takes offset and limit, in lines)."
	case rd.grep:
		return " To find what you need in it, search for it (grep)."
	}
	return ""
}

// cutResult cuts a tool result to at most limit estimated tokens, with a
// note that says that the cut is this request's alone, how much is shown
// and, when it is true, how the tools rd can read more: the full note
// when it takes at most half the limit, else a short one.
func cutResult(s string, limit int, rd readers) string {
	note := func(head string) string { return fullResultNote(s, head, rd) }
	// The longest the note can be: every number in it as long as len(s).
	reserve := max(model.EstimateTokens(fmt.Sprintf(resultNote, len(s), len(s), rd.hint(len(s), true))),
		model.EstimateTokens(fmt.Sprintf(resultNote, len(s), len(s), rd.hint(len(s), false))))
	if reserve*2 > limit {
		note = func(head string) string { return fmt.Sprintf(shortResultNote, len(head), len(s)) }
		reserve = model.EstimateTokens(note(s))
	}
	head := cutText(s, limit-reserve)
	return head + note(head)
}

// fullResultNote is the note on s cut to head. Reading a smaller part, by
// lines, shows more of s only if the line at the cut is one a result can
// show; when it is longer than head, the note says so instead.
func fullResultNote(s, head string, rd readers) string {
	start := strings.LastIndexByte(head, '\n') + 1
	end := strings.IndexByte(s[len(head):], '\n')
	if end < 0 {
		end = len(s) - len(head)
	}
	line := len(head) + end - start
	return fmt.Sprintf(resultNote, len(head), len(s), rd.hint(line, line > len(head)))
}

// The notes that end a cut tool result: the first %d of its %d bytes are
// shown, and, in the full note, a hint (see readers.hint).
const (
	resultNote = "\n[cairn: this result was cut to fit the context, only in this request: the first %d of its %d bytes are shown; " +
		"the tool returned it whole, and the agent's journal keeps it.%s]"
	longLineHint    = " The line at the cut is %d bytes long, more than is shown here"
	shortResultNote = "\n[cairn: cut to fit the context: %d of %d bytes shown]"
)

// minToolResult is the least max_tool_result: the short note, with the
// largest numbers, and room for some of the result.
var minToolResult = model.EstimateTokens(fmt.Sprintf(shortResultNote, 1<<40, 1<<40)) + 16

// cutText returns the longest prefix of s, ending at a line's end where
// one is near, whose estimated tokens are at most limit.
func cutText(s string, limit int) string {
	if model.EstimateTokens(s) <= limit {
		return s
	}
	if limit <= 0 {
		return ""
	}
	n := min(len(s), limit*4)
	for {
		for n > 0 && n < len(s) && !utf8.RuneStart(s[n]) {
			n--
		}
		if model.EstimateTokens(s[:n]) <= limit {
			break
		}
		n = n * 7 / 8
	}
	if i := strings.LastIndexByte(s[:n], '\n'); i > n/2 {
		n = i + 1
	}
	return s[:n]
}
