package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/cairnrun/cairn/checkpoint/conversation"
	"github.com/cairnrun/cairn/internal/plural"

	"github.com/urfave/cli/v2"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/host"
	"github.com/cairnrun/cairn/host/workflow"
	"github.com/cairnrun/cairn/internal/view"
)

func showCommand() *cli.Command {
	return &cli.Command{
		Name:      "show",
		Usage:     "an agent's status, boundary, labels, lineage, usage and agent file",
		ArgsUsage: "AGENT",
		Flags:     []cli.Flag{newStoreFlag(), newListJSONFlag()},
		Action:    showAction,
	}
}

// agentView is one agent as `cairn show --json` prints it.
type agentView struct {
	view.AgentLine
	Reason    string              `json:"reason,omitempty"`
	Messages  int                 `json:"messages"`
	Labels    checkpoint.Labels   `json:"labels"`
	Lineage   *checkpoint.Lineage `json:"lineage,omitempty"`
	Workspace string              `json:"workspace"`
	AgentFile string              `json:"agent_file"`
	// OpenCalls are the calls of its open round that have no result:
	// in flight while a process runs it, else interrupted.
	host.OpenCalls
	Bookmarks []bookmarkLine `json:"bookmarks,omitempty"`
	// Parent is a sub-agent's lineage; Children the sub-agents its
	// delegations made; Todos its task list.
	Parent   *checkpoint.Parent `json:"parent,omitempty"`
	Children []view.AgentLine   `json:"children,omitempty"`
	Todos    []checkpoint.Todo  `json:"todos,omitempty"`
	Net      *host.NetUsage     `json:"net,omitempty"`
	// NetInFlight are the HTTP exchanges of its open round while a
	// process runs it; NetInterrupted those of a round its stopped run
	// left open.
	NetInFlight    []string `json:"in_flight_requests,omitempty"`
	NetInterrupted []string `json:"interrupted_requests,omitempty"`
	// resume is the command that continues the agent: for a workflow's
	// step, the workflow's resume.
	resume string
}

// bookmarkLine is one bookmark as `cairn show` lists it.
type bookmarkLine struct {
	Label string    `json:"label"`
	Round int       `json:"round"`
	Time  time.Time `json:"time"`
}

func showAction(c *cli.Context) error {
	in, err := inspect(c, "cairn show AGENT")
	if err != nil {
		return err
	}
	store, err := openStore(c)
	if err != nil {
		return err
	}
	st := in.State
	resume := workflow.ResumeCommand(c.Context, store, st.Agent)
	v := agentView{
		AgentLine: view.AgentLine{Agent: st.Agent, Status: view.AgentStatus(in.Summary), Rounds: st.Round,
			ToolCalls: st.ToolCalls, Usage: st.Usage, Updated: st.UpdatedAt},
		resume: resume, Reason: view.ReasonOf(in.Summary, st.Reason, resume), Messages: len(st.Messages), Labels: st.Labels, Lineage: st.Lineage,
		Workspace: st.Definition.Workspace, AgentFile: string(in.AgentFile), OpenCalls: in.OpenCalls(),
		Net: in.NetUsage(),
	}
	if in.Summary.Locked {
		v.NetInFlight = in.InterruptedExchanges()
	} else {
		v.NetInterrupted = in.InterruptedExchanges()
	}
	for _, b := range in.Bookmarks {
		v.Bookmarks = append(v.Bookmarks, bookmarkLine{Label: b.Label, Round: b.Round, Time: b.Time})
	}
	if err := addTree(c, store, &v, st); err != nil {
		return err
	}
	if c.Bool(jsonFlag) {
		return writeJSON(c, v)
	}
	printView(c, v)
	return nil
}

func printView(c *cli.Context, v agentView) {
	w := c.App.Writer
	fmt.Fprintf(w, "agent      %s\n", v.Agent)
	status := v.Status
	if v.Reason != "" {
		status += " · " + v.Reason
	}
	fmt.Fprintf(w, "status     %s\n", terminalLine(status))
	fmt.Fprintf(w, "boundary   round %d · %s · %s\n", v.Rounds, plural.Count(v.Messages, "message"), plural.Count(v.ToolCalls, "tool call"))
	fmt.Fprintf(w, "usage      %s\n", usageLine(v.Usage))
	if n := v.Net; n != nil {
		fmt.Fprintf(w, "network    %s (%d refused) · %s sent · %d received\n", plural.Count(n.Requests, "request"), n.Refused, plural.Count(n.SentBytes, "byte"), n.ReceivedBytes)
	}
	fmt.Fprintf(w, "updated    %s\n", v.Updated.Local().Format(time.DateTime))
	fmt.Fprintf(w, "workspace  %s\n", v.Workspace)
	if l := labelsLine(v.Labels); l != "" {
		fmt.Fprintf(w, "labels     %s\n", l)
	}
	if v.Lineage != nil {
		fmt.Fprintf(w, "forked     from %s at round %d\n", v.Lineage.Agent, v.Lineage.Round)
	}
	for _, b := range v.Bookmarks {
		fmt.Fprintf(w, "bookmark   %s: round %d, %s\n", b.Label, b.Round, b.Time.Local().Format(time.DateTime))
	}
	if len(v.InFlight) > 0 {
		fmt.Fprintf(w, "in flight  %s (the run that holds the agent is taking them)\n", strings.Join(v.InFlight, ", "))
	}
	if len(v.Interrupted) > 0 {
		fmt.Fprintf(w, "in flight  %s (%s says what became of them)\n", strings.Join(v.Interrupted, ", "), v.resume)
	}
	printTree(w, v)
	for _, l := range append(v.NetInFlight, v.NetInterrupted...) {
		fmt.Fprintf(w, "request    %s\n", terminalLine(l))
	}
	agentFile := v.AgentFile
	if v.Parent != nil {
		agentFile = dedent(agentFile)
	}
	fmt.Fprintf(w, "agent file\n%s", indent(agentFile, "  "))
}

// dedent is a sub-agent's agent file as a person reads it. An inline
// definition is stored with each line where its parent's agent file has
// it, after a blank line for each line above it there, and indented as
// deep as its entry, so that an error names the line of the parent's
// file: it is shown from its first line that is not blank, with the
// indentation its lines share taken away (a comment indented less loses
// what it has).
func dedent(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for len(lines) > 0 && strings.TrimSpace(lines[0]) == "" {
		lines = lines[1:]
	}
	if len(lines) == 0 {
		return ""
	}
	shared := -1
	for _, l := range lines {
		text := strings.TrimLeft(l, " ")
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		if n := len(l) - len(text); shared < 0 || n < shared {
			shared = n
		}
	}
	for i, l := range lines {
		lines[i] = l[min(max(shared, 0), len(l)-len(strings.TrimLeft(l, " "))):]
	}
	return strings.Join(lines, "\n") + "\n"
}

func usageLine(u conversation.Usage) string {
	s := fmt.Sprintf("%s (%d in, %d out", plural.Count(u.Total(), "token"), u.InputTokens, u.OutputTokens)
	if u.CacheReadTokens+u.CacheWriteTokens > 0 {
		s += fmt.Sprintf(", cache %d read, %d written", u.CacheReadTokens, u.CacheWriteTokens)
	}
	s += ")"
	if u.CostMicroUSD > 0 {
		s += " · " + cost(u)
	}
	if u.NetRequests > 0 {
		s += fmt.Sprintf(" · %s (%s sent, %d received)", plural.Count(u.NetRequests, "HTTP request"), plural.Count(u.NetSentBytes, "byte"), u.NetReceivedBytes)
	}
	return s
}

func labelsLine(l checkpoint.Labels) string {
	var parts []string
	for _, kv := range [][2]string{{"tenant", l.Tenant}, {"principal", l.Principal}, {"template", l.Template}, {"correlation", l.Correlation}} {
		if kv[1] != "" {
			parts = append(parts, kv[0]+"="+kv[1])
		}
	}
	return strings.Join(parts, " ")
}

// indent prefixes every line of s.
func indent(s, prefix string) string {
	if s == "" {
		return ""
	}
	lines := strings.SplitAfter(strings.TrimRight(s, "\n")+"\n", "\n")
	return prefix + strings.Join(lines[:len(lines)-1], prefix)
}

// addTree adds to the view what places the agent in its tree: its parent,
// its children and their status, and its task list.
func addTree(c *cli.Context, store checkpoint.Store, v *agentView, st *checkpoint.State) error {
	v.Parent, v.Todos = st.Parent, st.Todos
	kids, err := host.Children(c.Context, store, st.Agent)
	if err != nil {
		return runError(err)
	}
	for _, k := range kids {
		v.Children = append(v.Children, view.LineOf(k))
	}
	return nil
}

func printTree(w io.Writer, v agentView) {
	if p := v.Parent; p != nil {
		fmt.Fprintf(w, "parent     %s · call %s · sub-agent %s · depth %d\n", p.Agent, p.Call, p.Name, p.Depth)
	}
	for i, k := range v.Children {
		head := "children  "
		if i > 0 {
			head = "          "
		}
		fmt.Fprintf(w, "%s %s · %s · %s · %s\n", head, k.Agent, k.Status, plural.Count(k.Rounds, "round"), plural.Count(k.Usage.Total(), "token"))
	}
	if len(v.Todos) > 0 {
		fmt.Fprintf(w, "tasks\n%s\n", indent(view.FormatTodos(v.Todos), "  "))
	}
}
