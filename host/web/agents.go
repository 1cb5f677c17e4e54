package web

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/cairnrun/cairn/checkpoint/conversation"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/host"
	"github.com/cairnrun/cairn/host/workflow"
	"github.com/cairnrun/cairn/internal/plural"
	"github.com/cairnrun/cairn/internal/view"
)

// agentLine is one agent in the list: `cairn ls --json`'s fields and its
// labels and lineage.
type agentLine struct {
	view.AgentLine
	Labels  checkpoint.Labels   `json:"labels"`
	Lineage *checkpoint.Lineage `json:"lineage,omitempty"`
	// Held says this server runs the agent (so it can pause it).
	Held bool `json:"held,omitempty"`
	// Depth is how far below the top of its tree the list shows it: the
	// list is ordered as trees, each agent followed by its sub-agents.
	Depth int `json:"depth,omitempty"`
}

// agentView is one agent: what `cairn show --json` prints, without the
// agent file, and the calls that await a decision.
type agentView struct {
	agentLine
	Reason    string `json:"reason,omitempty"`
	Messages  int    `json:"messages"`
	Workspace string `json:"workspace"`
	// OpenCalls are the calls of its open round that have no result:
	// in flight while a process runs it, else interrupted.
	host.OpenCalls
	Bookmarks []bookmark             `json:"bookmarks,omitempty"`
	Awaiting  []host.ApprovalRequest `json:"awaiting,omitempty"`
	// Delegated says, of a sub-agent, which agent's call made it; Children
	// are the first of the sub-agents its own delegations made, by id, and
	// ChildrenNext, while more remain, the URL of the next page of them.
	Delegated    *checkpoint.Parent `json:"delegated_by,omitempty"`
	Children     []agentLine        `json:"children,omitempty"`
	ChildrenNext string             `json:"children_next,omitempty"`
}

type bookmark struct {
	Label string    `json:"label"`
	Round int       `json:"round"`
	Time  time.Time `json:"time"`
}

// handleAgents lists a page of the agents in the list's tree order,
// each top of a tree and each agent's sub-agents by id, so that a page's
// cursor, the path of ids from its last agent's top down to it, places
// the next page even when that agent is gone.
func (s *Server) handleAgents(w http.ResponseWriter, r *http.Request) {
	p, err := pageOf(r)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	list, err := s.store.List()
	if err != nil {
		s.fail(w, r, err)
		return
	}
	slices.SortStableFunc(list, func(a, b checkpoint.Summary) int { return strings.Compare(a.ID, b.ID) })
	list, depths := view.TreeOrder(list)
	paths := treePaths(list, depths)
	start := 0
	if p.after != nil {
		start = sort.Search(len(paths), func(i int) bool { return slices.Compare(paths[i], p.after) > 0 })
	}
	end := min(start+p.limit, len(list))
	out := make([]agentLine, 0, end-start)
	for i := start; i < end; i++ {
		l := s.line(list[i])
		l.Depth = depths[i]
		l.Labels, l.Lineage = list[i].Labels, list[i].Lineage
		out = append(out, l)
	}
	if end < len(list) {
		setNext(w, r.URL.Path, p, paths[end-1])
	}
	writeJSON(w, http.StatusOK, out)
}

// treePaths are, for each agent of a list in tree order with its depths,
// the ids from the top of its tree down to it.
func treePaths(list []checkpoint.Summary, depths []int) [][]string {
	out := make([][]string, len(list))
	var up []string
	for i, sum := range list {
		up = append(up[:min(depths[i], len(up))], sum.ID)
		out[i] = slices.Clone(up)
	}
	return out
}

func (s *Server) line(sum checkpoint.Summary) agentLine {
	return agentLine{AgentLine: view.LineOf(sum), Held: s.holds(sum.ID)}
}

func (s *Server) handleAgent(w http.ResponseWriter, r *http.Request) {
	in, err := host.Inspect(r.Context(), s.store, r.PathValue("id"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	st := in.State
	resume := "" // read only when the reason says it: it reads the agent's tree
	if in.Summary.Status == checkpoint.StatusApproval && in.Summary.Decided {
		resume = workflow.ResumeCommand(r.Context(), s.store, st.Agent)
	}
	v := agentView{agentLine: s.line(in.Summary), Reason: view.ReasonOf(in.Summary, st.Reason, resume), Messages: len(st.Messages),
		Workspace: st.Definition.Workspace, OpenCalls: in.OpenCalls()}
	v.Labels, v.Lineage, v.Delegated = st.Labels, st.Lineage, st.Parent
	var next []string
	if v.Children, next, err = s.children(r.Context(), st.Agent, paging{limit: pageSize}); err != nil {
		s.fail(w, r, err)
		return
	}
	if next != nil {
		v.ChildrenNext = nextPage("/api/agents/"+st.Agent+"/children", paging{}, next)
	}
	for _, b := range in.Bookmarks {
		v.Bookmarks = append(v.Bookmarks, bookmark{Label: b.Label, Round: b.Round, Time: b.Time})
	}
	v.Awaiting = in.Awaiting()
	writeTagged(w, r, v)
}

// round is one round of the conversation: the user's messages that led
// to it, the model's turn and the results of its calls.
type round struct {
	Round    int                    `json:"round"`
	Messages []conversation.Message `json:"messages"`
}

// rounds groups a conversation by round: each assistant message opens
// one, the user messages before it belong to it, and the tool results
// after it. User messages after the last turn make a round of their own,
// numbered past the boundary, that the model has not answered yet.
func rounds(msgs []conversation.Message) []round {
	var out []round
	var lead []conversation.Message
	for _, m := range msgs {
		switch {
		case m.Role == conversation.RoleAssistant:
			out = append(out, round{Round: len(out) + 1, Messages: append(lead, m)})
			lead = nil
		case m.Role == conversation.RoleTool && len(out) > 0:
			out[len(out)-1].Messages = append(out[len(out)-1].Messages, m)
		default:
			lead = append(lead, m)
		}
	}
	if len(lead) > 0 {
		out = append(out, round{Round: len(out) + 1, Messages: lead})
	}
	return out
}

func (s *Server) handleConversation(w http.ResponseWriter, r *http.Request) {
	in, err := host.Inspect(r.Context(), s.store, r.PathValue("id"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	all := rounds(in.State.Messages)
	if all == nil {
		all = []round{} // no round yet: an empty list, not null
	}
	q := r.URL.Query().Get("round")
	if q == "" {
		writeJSON(w, http.StatusOK, all)
		return
	}
	n, err := strconv.Atoi(q)
	if err != nil || n < 1 {
		writeError(w, http.StatusBadRequest, "round "+q+": want a round number from 1")
		return
	}
	if n > len(all) {
		writeError(w, http.StatusNotFound, "round "+q+": the agent's conversation has rounds 1 to "+strconv.Itoa(len(all)))
		return
	}
	writeJSON(w, http.StatusOK, all[n-1])
}

func (s *Server) handleRuns(w http.ResponseWriter, r *http.Request) {
	in, err := host.Inspect(r.Context(), s.store, r.PathValue("id"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, in.Runs())
}

func (s *Server) handleApprovals(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if _, err := s.store.Summary(id); err != nil {
		s.fail(w, r, err)
		return
	}
	pending, err := host.Pending(r.Context(), s.store, id)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if pending == nil {
		pending = []host.ApprovalRequest{}
	}
	writeJSON(w, http.StatusOK, pending)
}

// diffBudget bounds the bytes that the changes of one answer of GET
// /diff take in its JSON, escapes, quotes and commas counted: a round
// that changed more paths than fit is answered with the first of them,
// and one that wrote long texts with the lines that fit, and a note of
// how many were left out and where the whole diff is.
const diffBudget = 1 << 20

// change is one path a round changed, with its line diff when both sides
// are text.
type change struct {
	host.FileChange
	Binary bool `json:"binary,omitempty"`
	// TooLarge says a file of the change is larger than 1 MiB:
	// neither was read, and the change has no lines.
	TooLarge bool     `json:"too_large,omitempty"`
	Lines    []string `json:"lines,omitempty"`
	// Cut says Lines are the first of the change's diff lines, or none
	// of them: the answer's diffBudget was spent.
	Cut bool `json:"cut,omitempty"`
}

// cutMark ends a line cut short.
const cutMark = " …"

// fitLines are the first of lines whose JSON (see jsonSize) fits in
// budget, the last one cut short (on a rune's boundary) if it does not
// fit whole, with what is left of budget and whether any was left out.
func fitLines(lines []string, budget int) ([]string, int, bool) {
	for i, l := range lines {
		if n := jsonSize(l); n <= budget {
			budget -= n
			continue
		}
		out := lines[:i:i]
		if room := budget - jsonSize(cutMark); room >= 0 {
			out = append(out, jsonPrefix(l, room)+cutMark)
		}
		return out, 0, true
	}
	return lines, budget, false
}

// jsonSize is the bytes s takes as an element of a JSON array as
// writeJSON writes it: its quotes, its comma and each rune as
// encoding/json escapes it.
func jsonSize(s string) int {
	n := 3
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		n += jsonRuneSize(r, size)
		i += size
	}
	return n
}

// jsonPrefix is the longest prefix of s, cut on a rune's boundary, whose
// runes take at most n bytes of JSON.
func jsonPrefix(s string, n int) string {
	i := 0
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		if n -= jsonRuneSize(r, size); n < 0 {
			break
		}
		i += size
	}
	return s[:i]
}

// jsonRuneSize is the bytes encoding/json, escaping HTML as writeJSON's
// encoder does, writes for the rune r that took size bytes of a string.
func jsonRuneSize(r rune, size int) int {
	switch {
	case r == '"' || r == '\\' || r == '\b' || r == '\f' || r == '\n' || r == '\r' || r == '\t':
		return 2
	case r < 0x20 || r == '<' || r == '>' || r == '&' || r == '\u2028' || r == '\u2029':
		return 6 // \u00XX, \u2028
	case r == utf8.RuneError && size == 1:
		return 6 // \ufffd for a byte that is not UTF-8
	}
	return size
}

func (s *Server) handleDiff(w http.ResponseWriter, r *http.Request) {
	n := 0
	if q := r.URL.Query().Get("round"); q != "" {
		var err error
		if n, err = strconv.Atoi(q); err != nil || n < 1 {
			writeError(w, http.StatusBadRequest, "round "+q+": want a round number from 1")
			return
		}
	}
	got, changes, err := s.eng.Changes(r.Context(), r.PathValue("id"), n)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	out, leftOut, err := fitChanges(changes, diffBudget)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	answer := map[string]any{"round": got, "changes": out}
	if cut := slices.ContainsFunc(out, func(c change) bool { return c.Cut }); cut || leftOut > 0 {
		id := r.PathValue("id")
		answer["truncated"] = true
		note := "each change cut is marked"
		if leftOut > 0 {
			answer["left_out"] = leftOut
			note = leftOutNote(leftOut, len(changes)) + ", " + note
		}
		answer["note"] = fmt.Sprintf("the diff is cut short at %d bytes (%s); `cairn diff %s --round %d` shows it whole", diffBudget, note, id, got)
	}
	writeJSON(w, http.StatusOK, answer)
}

// fitChanges are the first of changes whose JSON fits in budget, each
// with its line diff when both sides are text, and how many were left
// out: every change listed is listed whole, with its op and sizes, and
// its lines take what is left of budget, in order, past which they are
// cut short or left out and the change marked cut. Only the files of the
// changes listed are read, one change at a time, none larger than
// 1 MiB.
//
// # Errors
//
// The error of reading a file of a change listed.
func fitChanges(changes []host.FileChange, budget int) ([]change, int, error) {
	var out []change
	for _, fc := range changes {
		c := change{FileChange: fc}
		before, after, err := fc.Texts()
		switch {
		case errors.Is(err, host.ErrTooLarge):
			c.TooLarge = true
		case err != nil:
			return nil, 0, err
		default:
			c.Binary = !view.IsText(before) || !view.IsText(after)
		}
		n := changeSize(c)
		if n > budget {
			break
		}
		out, budget = append(out, c), budget-n
	}
	for i := range out {
		switch {
		case out[i].Binary || out[i].TooLarge:
		case budget <= len(linesField):
			out[i].Cut, budget = max(out[i].BeforeSize, 0)+max(out[i].AfterSize, 0) > 0, 0
		default:
			before, after, err := out[i].Texts()
			if err != nil {
				return nil, 0, err
			}
			var lines []string
			lines, budget, out[i].Cut = fitLines(view.DiffLines(before, after), budget-len(linesField))
			if len(lines) > 0 {
				out[i].Lines = lines
			} else {
				budget += len(linesField)
			}
		}
	}
	if out == nil {
		out = []change{}
	}
	return out, len(changes) - len(out), nil
}

// linesField is what a change's lines take in its JSON besides their own
// (see jsonSize).
const linesField = `,"lines":[]`

// changeSize is the bytes a change, with no lines, takes in the JSON of
// an answer, marked cut and with its comma.
func changeSize(c change) int {
	c.Cut, c.Lines = true, nil
	b, err := json.Marshal(c)
	if err != nil {
		return math.MaxInt
	}
	return len(b) + 1
}

// children lists a page of the sub-agents an agent's delegations made,
// by id, and the cursor of the next page while more remain.
func (s *Server) children(ctx context.Context, id string, p paging) ([]agentLine, []string, error) {
	kids, err := host.Children(ctx, s.store, id)
	if err != nil {
		return nil, nil, err
	}
	slices.SortFunc(kids, func(a, b checkpoint.Summary) int { return strings.Compare(a.ID, b.ID) })
	start := 0
	if len(p.after) > 0 {
		after := p.after[len(p.after)-1]
		start = sort.Search(len(kids), func(i int) bool { return kids[i].ID > after })
	}
	end := min(start+p.limit, len(kids))
	out := make([]agentLine, 0, end-start)
	for _, k := range kids[start:end] {
		out = append(out, s.line(k))
	}
	if end < len(kids) {
		return out, []string{kids[end-1].ID}, nil
	}
	return out, nil, nil
}

func (s *Server) handleChildren(w http.ResponseWriter, r *http.Request) {
	p, err := pageOf(r)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	// An agent that cannot be read is refused, as its other routes
	// refuse it, though its sub-agents are agents of their own.
	id := r.PathValue("id")
	if sum, err := s.store.Summary(id); err != nil || sum.Err != nil {
		s.fail(w, r, cmp.Or(err, sum.Err))
		return
	}
	out, next, err := s.children(r.Context(), id, p)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if next != nil {
		setNext(w, r.URL.Path, p, next)
	}
	writeJSON(w, http.StatusOK, out)
}

// leftOutNote says that leftOut of a round's total changes are left out
// of a diff's answer.
func leftOutNote(leftOut, total int) string {
	verb := "are"
	if leftOut == 1 {
		verb = "is"
	}
	return fmt.Sprintf("%d of the round's %s %s left out", leftOut, plural.Count(total, "change"), verb)
}
