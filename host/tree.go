package host

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"sync"
	"time"

	"github.com/cairnrun/cairn/checkpoint/conversation"

	"github.com/cairnrun/cairn/checkpoint"
)

// A tree of agents is a top-level agent and the sub-agents its calls of
// delegate made, and theirs. What the tree shares while it runs in one
// process:
//
//   - its budget: max_tokens and max_cost of the top-level agent bound the
//     tokens and cost of the whole tree. Each agent's usage counts until
//     the round that delegated to it commits, from then on as part of its
//     parent's (the delegation's result carries it), so nothing is
//     counted twice. A model's turn counts as it is answered, and a round
//     begins only as the rounds in flight allow (tree_reserve.go).
//   - its time: max_time of the top-level agent counts from the start of
//     its run (so it restarts on resume) and stops every agent of the tree.
//   - its events: a sub-agent's events carry its id, its parent's and its
//     depth, and reach the top-level run's caller and history too.
//
// Rounds are each agent's own: a sub-agent's max_rounds is its own
// agent file's.
//
// A sub-agent whose own max_tokens, max_cost or max_time is set bounds
// its subtree the same way: when it delegates, its run gets a tree of its
// own (nested) whose up is the tree it is in, and what an agent below it
// uses counts in both, so no child passes a budget of any agent above it.
//
// An agent made from a sub-agent's definition rather than by a
// delegation (a workflow's delegation step) has no parent agent, but the
// agent file its definition keeps above it (its `parent:` file) bounds it
// and its subtree the same way, as that file's agent would bound its
// child: its run's tree is one per kept file that sets a budget
// (fileTrees), the nearest first, counting what the agent and those below
// it use.
type tree struct {
	limits   RunLimits
	deadline time.Time
	// top names the top-level agent when it is not the run's root: a
	// sub-agent resumed by itself (see treeAbove).
	top string
	// up is the tree the sub-agent owner, whose limits these are, is in;
	// nil for the top-level agent's.
	up    *tree
	owner string
	// file names the agent file kept above the tree's top-level agent
	// whose limits these are (see fileTrees); "" for an agent's own.
	file string
	mu   sync.Mutex
	// used is, by agent, the usage not yet part of its parent's state.
	used map[string]conversation.Usage
	// rounds counts the rounds the agents of the tree have committed
	// since it was made, in this run (see timed).
	rounds int
	// estTokens and estCost are the most one round of the tree has used
	// in this process (see tree_reserve.go).
	estTokens, estCost int64
	// flying counts the rounds of the tree's agents that reserve let
	// begin and whose model has not answered; reserveMu, of the tree at
	// the end of the ups, guards it in every tree below, and wake is
	// closed when a round in flight is answered.
	flying    int
	reserveMu sync.Mutex
	wake      chan struct{}
}

// nested is the tree of the sub-agent run r, which bounds the agents below
// it by r's own max_tokens, max_cost and max_time, inside the tree r is in;
// that tree itself when r sets none of them.
func nested(r *run) *tree {
	if l := r.af.Limits; l.MaxTokens <= 0 && l.MaxCost <= 0 && l.MaxTime <= 0 {
		return r.tree
	}
	t := newTree(r)
	t.up = r.tree
	if r.tree.file != "" && r.tree.top == r.agentID {
		// The top-level agent under the files kept above it: its limits
		// are raised by its own resume, as any top-level agent's.
		t.top = r.agentID
		return t
	}
	t.owner = r.agentID
	return t
}

// fileTrees are the trees of the agent files kept above top, a top-level
// agent made from a sub-agent's definition (a workflow's delegation step),
// parent being the nearest: one for each that sets max_tokens, max_cost
// or max_time, the nearest returned and the farthest at the end of its
// ups, each counting what top's tree has used (treeUsage) and its
// max_time from started; nil when none sets any.
func fileTrees(store checkpoint.Store, top string, parent *AgentFile, started time.Time) *tree {
	var files []*AgentFile
	for p := parent; p != nil && len(files) <= maxDepth; p = p.parent {
		if l := p.Limits; l.MaxTokens > 0 || l.MaxCost > 0 || l.MaxTime > 0 {
			files = append(files, p)
		}
	}
	if len(files) == 0 {
		return nil
	}
	used, err := treeUsage(store, top)
	if err != nil {
		used = map[string]conversation.Usage{} // not made yet: it has used nothing
	}
	var t *tree
	for i := len(files) - 1; i >= 0; i-- {
		l := files[i].Limits
		n := &tree{top: top, file: files[i].describe(), up: t, used: maps.Clone(used), // each counts on its own
			limits: RunLimits{MaxTokens: l.MaxTokens, MaxCost: l.MaxCost, MaxTime: l.MaxTime}}
		if l.MaxTime > 0 {
			n.deadline = started.Add(time.Duration(l.MaxTime))
		}
		t = n
	}
	return t
}

// earliest is the soonest deadline of t and the trees above it that
// counts (see timed) for an agent whose run has committed a round, or
// not (started); zero for none.
func (t *tree) earliest(started bool) time.Time {
	var at time.Time
	for ; t != nil; t = t.up {
		if t.timed(started) && !t.deadline.IsZero() && (at.IsZero() || t.deadline.Before(at)) {
			at = t.deadline
		}
	}
	return at
}

// requestDeadline is when the max_time of t, or of a tree above it, ends
// a model request sent at sent by an agent whose run has committed a round
// or not (started): the earliest of their deadlines, each that does not
// count yet (see timed) put at its max_time after the request was sent;
// zero for none.
func (t *tree) requestDeadline(started bool, sent time.Time) time.Time {
	var at time.Time
	for ; t != nil; t = t.up {
		d := t.deadline
		if !d.IsZero() && !t.timed(started) {
			d = sent.Add(time.Duration(t.limits.MaxTime))
		}
		at = sooner(at, d)
	}
	return at
}

// timed says whether t's max_time stops an agent of its tree, whose run
// has committed a round or not (started): once the agent's run, or any
// agent of t's tree, has committed a round in this run. So, as an agent's
// own max_time lets each run commit one round, a tree's max_time shorter
// than starting its agents takes leaves the tree able to go on, one round
// or more on each resume; and once a round is committed, the agents that
// start after the time is up, the rest of a fan-out, stop before their
// first.
func (t *tree) timed(started bool) bool {
	if started {
		return true
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.rounds > 0
}

// roundCommitted counts a round an agent of t's tree committed in this
// run, in t and the trees above it.
func (t *tree) roundCommitted() {
	for ; t != nil; t = t.up {
		t.mu.Lock()
		t.rounds++
		t.mu.Unlock()
	}
}

// widest are the largest token and cost limits of t and the trees above
// it.
func (t *tree) widest() RunLimits {
	var l RunLimits
	for ; t != nil; t = t.up {
		l.MaxTokens, l.MaxCost = max(l.MaxTokens, t.limits.MaxTokens), max(l.MaxCost, t.limits.MaxCost)
	}
	return l
}

// newTree starts the tree of the top-level run r: what it has used is its
// state's usage, what its interrupted round had spent, a resume's kept
// delegations included, and its turn not yet committed, and what each sub-agent whose delegation has
// no result yet has used (treeUsage). A resumed sub-agent reports its
// usage again as it starts (adopt), but a sibling that starts before it
// must count it already, or it runs a round the tree cannot afford.
func newTree(r *run) *tree {
	used := map[string]conversation.Usage{}
	if r.af.Limits.MaxTokens > 0 || r.af.Limits.MaxCost > 0 {
		if u, err := treeUsage(r.store, r.agentID); err == nil {
			used = u // a store that cannot be read fails the children's resume, saying why
		}
	}
	// The turn that delegated counts already (turnAnswered), and is the
	// largest round the tree knows.
	used[r.agentID] = r.state().Usage.Add(r.spent).Add(r.open)
	t := &tree{limits: r.af.Limits, used: used, estTokens: r.open.Total(), estCost: r.open.CostMicroUSD}
	if r.af.Limits.MaxTime > 0 {
		t.deadline = r.startedAt.Add(time.Duration(r.af.Limits.MaxTime))
	}
	return t
}

// report records an agent's usage at its boundary, and forgets the
// children whose usage that now includes, in t and the trees above it.
func (t *tree) report(agent string, u conversation.Usage, children []string) {
	for ; t != nil; t = t.up {
		t.mu.Lock()
		t.used[agent] = u
		for _, c := range children {
			delete(t.used, c)
		}
		t.mu.Unlock()
	}
}

func (t *tree) total() conversation.Usage {
	t.mu.Lock()
	defer t.mu.Unlock()
	var sum conversation.Usage
	for _, u := range t.used {
		sum = sum.Add(u)
	}
	return sum
}

// limitReached says which of the limits of t, or of a tree above it,
// stops a sub-agent before another round, and how to go on. started says
// whether the sub-agent's run has committed a round (see timed).
func (t *tree) limitReached(root string, started bool) string {
	for ; t != nil; t = t.up {
		var why string
		switch {
		case t.owner != "":
			why = t.ownerLimitReached(root, t.timed(started))
		case t.file != "":
			why = t.fileLimitReached(t.timed(started))
		default:
			why = t.topLimitReached(root, t.timed(started))
		}
		if why != "" {
			return why
		}
	}
	return ""
}

// topLimitReached is limitReached of the tree of the top-level agent,
// root unless t.top names it: its limits are raised by root's resume.
func (t *tree) topLimitReached(root string, timed bool) string {
	if t.top != "" {
		root = t.top
	}
	reason, flag := t.over(timed)
	if reason == "" {
		return ""
	}
	return fmt.Sprintf("the tree of %s reached %s; resume %s with %s to allow more", root, reason, root, flag)
}

// fileLimitReached is limitReached of the tree of an agent file kept
// above t.top (see fileTrees): the resume of t.top raises its limits too,
// as they bound t.top's tree alone.
func (t *tree) fileLimitReached(timed bool) string {
	reason, flag := t.over(timed)
	if reason == "" {
		return ""
	}
	return fmt.Sprintf("the tree of %s reached %s of %s, the parent agent file it was made under; resume %s with %s to allow more",
		t.top, reason, t.file, t.top, flag)
}

// ownerLimitReached is limitReached of the tree of a sub-agent, t.owner:
// its limit is its own, which a resume of root (the top-level agent, t.top
// where the run's root is not) does not raise.
func (t *tree) ownerLimitReached(root string, timed bool) string {
	if t.top != "" {
		root = t.top
	}
	reason, flag := t.over(timed)
	if reason == "" {
		return ""
	}
	return fmt.Sprintf("the tree of %s reached %s, a limit of that sub-agent's own: raise it resuming it (`cairn resume %s` with %s), then `cairn resume %s`",
		t.owner, reason, t.owner, flag, root)
}

// over names the limit of t that the tree's use has reached, with what it
// used ("max_tokens (2100 used of 2000)"), and the flag of resume that
// raises it; "" when it has reached none. max_time counts when timed.
func (t *tree) over(timed bool) (reason, flag string) {
	l, u := t.limits, t.total()
	switch {
	case l.MaxTokens > 0 && u.Total() >= l.MaxTokens:
		return fmt.Sprintf("max_tokens (%d used of %d)", u.Total(), l.MaxTokens), "--max-tokens"
	case l.MaxCost > 0 && float64(u.CostMicroUSD) >= l.MaxCost*1e6:
		return fmt.Sprintf("max_cost ($%.4f spent of $%.4f)", float64(u.CostMicroUSD)/1e6, l.MaxCost), "--max-cost"
	case timed && !t.deadline.IsZero() && !time.Now().Before(t.deadline):
		return fmt.Sprintf("max_time (%s in this run)", time.Duration(l.MaxTime)), "--max-time"
	}
	return "", ""
}

// subRun is what a delegation gives the run of its sub-agent.
type subRun struct {
	tree    *tree
	root    string
	lineage checkpoint.Parent
	// forward hands the sub-agent's events to its parent's run.
	forward EventFunc
	// above is the parent's agent file, with those above it: a resumed
	// sub-agent's, as a new one's is (resolve).
	above *AgentFile
}

// adopt makes r part of the tree sub says, or, for a run of an agent not
// started by a delegation, reads its lineage from its state. A fork of a
// sub-agent keeps the sub-agent's parent, whose agent files above bind its
// calls, but is the top of a tree of its own: the tree its source was in
// does not count what it uses, and its resume does not reach it.
func (r *run) adopt(sub *subRun) {
	if p := r.state().Parent; p != nil {
		r.parentID, r.depth = p.Agent, p.Depth
		switch {
		case sub == nil && r.state().Lineage == nil:
			r.tree = r.treeAbove()
		case sub == nil:
			r.forkAlone = true
		}
	} else if sub == nil && r.af.parent != nil {
		// A workflow's delegation step: the parent file bounds its tree.
		r.tree = fileTrees(r.store, r.agentID, r.af.parent, r.startedAt)
	}
	if sub != nil {
		r.tree, r.root = sub.tree, sub.root
		// What the sub-agent used before this run (a resumed delegation)
		// counts now: its next round must not pass the tree's budget.
		// Its parent's state holds none of it until the delegating round
		// commits.
		if u := r.state().Usage; r.tree != nil && u != (conversation.Usage{}) {
			r.tree.report(r.agentID, u, nil)
		}
	}
}

// rootID is the top-level agent of r's tree.
func (r *run) rootID() string {
	if r.root != "" {
		return r.root
	}
	return r.agentID
}

// treeLimitReached is limitReached for the tree r is a sub-agent of,
// max_time counting as timed says.
func (r *run) treeLimitReached(timed bool) string {
	if r.tree == nil || r.root == "" && r.tree.top == "" && r.tree.file == "" {
		return ""
	}
	return r.tree.limitReached(r.rootID(), timed)
}

// treeAbove is the tree of a sub-agent run by itself (`cairn resume
// CHILD`), not by its parent's delegation: its top-level agent's
// max_tokens, max_cost and max_time bind it as they would under the
// parent, and so do those of each sub-agent between (see nested), each
// counting what its tree has used: the agent's usage and its interrupted
// round's spend, and each agent's below it not yet part of its parent's
// (the round that delegated to it has not committed). nil when no agent
// above sets any of them, or the tree cannot be read.
func (r *run) treeAbove() *tree {
	var above []*checkpoint.Recovered // the parent first, the top last
	for id := r.state().Parent.Agent; len(above) <= maxDepth; {
		rec, err := r.store.Read(id)
		if err != nil {
			return nil // the top's resume, which cannot read it either, says why
		}
		above = append(above, rec)
		if rec.State.Parent == nil {
			break
		}
		id = rec.State.Parent.Agent
	}
	top := above[len(above)-1].State.Agent
	var t *tree
	if kept := above[len(above)-1].State.Definition.Above; len(kept) > 0 {
		// The top is a workflow's delegation step: its parent file
		// bounds its tree.
		files, err := keptAbove(r.store, top, kept)
		if err != nil {
			return nil
		}
		t = fileTrees(r.store, top, files, r.startedAt)
	}
	limited := t != nil
	for i := len(above) - 1; i >= 0; i-- {
		af, err := r.storedAgentFile(above[i].State.Definition)
		if err != nil {
			return nil
		}
		l := af.Limits
		if i < len(above)-1 && l.MaxTokens <= 0 && l.MaxCost <= 0 && l.MaxTime <= 0 {
			continue
		}
		used, err := treeUsage(r.store, above[i].State.Agent)
		if err != nil {
			return nil
		}
		limited = limited || l.MaxTokens > 0 || l.MaxCost > 0 || l.MaxTime > 0
		n := &tree{top: top, limits: l, used: used, up: t}
		if i < len(above)-1 {
			n.owner = above[i].State.Agent
		}
		if l.MaxTime > 0 {
			n.deadline = r.startedAt.Add(time.Duration(l.MaxTime))
		}
		t = n
	}
	if !limited {
		return nil
	}
	return t
}

// storedAgentFile is the agent file a definition stored.
func (r *run) storedAgentFile(def checkpoint.Definition) (*AgentFile, error) {
	src, err := r.store.Blob(def.AgentFile)
	if err != nil {
		return nil, err
	}
	return parseStored(src, def.AgentDir)
}

// treeUsage is, by agent, what the tree of top has used and no parent's
// state or interrupted round holds: top's own, and each sub-agent's whose
// delegating call has no result in its parent's journal yet.
func treeUsage(store checkpoint.Store, top string) (map[string]conversation.Usage, error) {
	list, err := store.List()
	if err != nil {
		return nil, err
	}
	kids := map[string][]string{}
	for _, s := range list {
		if s.Parent != "" {
			kids[s.Parent] = append(kids[s.Parent], s.ID)
		}
	}
	used := map[string]conversation.Usage{}
	var walk func(id string, parent *checkpoint.Recovered, depth int) error
	walk = func(id string, parent *checkpoint.Recovered, depth int) error {
		rec, err := store.Read(id)
		if err != nil {
			return err
		}
		if parent == nil || !answered(parent, rec.State.Parent) {
			used[id] = rec.State.Usage.Add(tailSpend(rec.Tail))
		}
		if depth > maxDepth {
			return nil
		}
		for _, k := range kids[id] {
			if err := walk(k, rec, depth+1); err != nil {
				return err
			}
		}
		return nil
	}
	return used, walk(top, nil, 0)
}

// Unanswered says whether id is a sub-agent whose parent has no result
// of the call that made it yet, committed or in its interrupted round:
// the parent takes its answer when it is resumed. A fork of a sub-agent,
// made by no call, is not one; nor is an agent that cannot be read.
func Unanswered(ctx context.Context, store checkpoint.Store, id string) bool {
	if usableNow(ctx, store) != nil {
		return false
	}
	rec, err := store.Read(id)
	if err != nil || rec.State.Parent == nil || rec.State.Lineage != nil {
		return false
	}
	parent, err := store.Read(rec.State.Parent.Agent)
	return err == nil && !answered(parent, rec.State.Parent)
}

// answered reports whether parent has the result of the call that made a
// sub-agent of lineage p, committed or in its interrupted round: the
// sub-agent's usage is then part of the parent's.
func answered(parent *checkpoint.Recovered, p *checkpoint.Parent) bool {
	if p == nil {
		return false
	}
	for _, m := range parent.State.Messages {
		if m.Role == conversation.RoleTool && m.CallID == p.Call {
			return true
		}
	}
	for _, t := range parent.Tail {
		if t.Type == checkpoint.RecResult && t.Call == p.Call {
			return true
		}
	}
	return false
}

// forward hands an event of a sub-agent to r's caller and history, in turn
// with r's own.
func (r *run) forward(e Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if b, err := json.Marshal(e); err == nil {
		r.history.Write(append(b, '\n'))
	}
	if r.onEvent != nil {
		r.onEvent(e)
	}
}

// committed is what follows a round's commit besides its events: the task
// list's event, and the tree's account of the agent's usage.
func (r *run) committed(round int, results []callResult) {
	r.emitTodos(round, results)
	r.forgetDelegations(round, results)
	// The round a resume found interrupted is the first this run commits:
	// what it had spent is in the state now, and a tree made after this
	// (newTree) must not count it again.
	r.spent = conversation.Usage{}
	if r.tree == nil {
		return
	}
	var children []string
	for _, res := range results {
		if res.native != nil && res.native.child != "" {
			children = append(children, res.native.child)
		}
	}
	r.tree.report(r.agentID, r.state().Usage, children)
	r.tree.roundCommitted()
}

// Children lists the sub-agents an agent's delegations made, by id.
func Children(ctx context.Context, store checkpoint.Store, id string) ([]checkpoint.Summary, error) {
	if err := usableNow(ctx, store); err != nil {
		return nil, err
	}
	return children(store, id)
}

// children is Children of a usable store.
func children(store checkpoint.Store, id string) ([]checkpoint.Summary, error) {
	list, err := store.List()
	if err != nil {
		return nil, err
	}
	var out []checkpoint.Summary
	for _, s := range list {
		if s.Parent == id {
			out = append(out, s)
		}
	}
	return out, nil
}

// removeChildren removes the sub-agents an agent's delegations made, and
// theirs, for a run that starts the agent over: its new delegations must
// not find the old children's answers. A child that a process runs is
// not removed: its lock's error says which. A fork of a sub-agent keeps
// the sub-agent's parent, whose agent file still bounds it, but no
// delegation made it: it has a lineage, and is a person's agent, kept.
func (e *Engine) removeChildren(id string) error {
	kids, err := children(e.store, id)
	if err != nil {
		return err
	}
	for _, k := range kids {
		if k.Lineage != nil {
			continue
		}
		if err := e.removeTree(k.ID); err != nil {
			return fmt.Errorf("start %s over: remove its sub-agent %s: %w", id, k.ID, err)
		}
	}
	return nil
}

func (e *Engine) removeTree(id string) error {
	lock, err := e.store.Lock(id, checkpoint.ThisProcess("fresh"))
	if err != nil {
		return err
	}
	defer lock.Unlock()
	if err := e.removeChildren(id); err != nil {
		return err
	}
	return e.store.Remove(id)
}

// RootOf is the top-level agent of the tree agent id is in: id itself for
// an agent no delegation made, or one whose parent cannot be read (or
// when ctx has ended). A fork is the root of a tree of its own: the parent
// a fork of a sub-agent keeps (whose approval rules bind it) never resumes
// it.
func RootOf(ctx context.Context, store checkpoint.Store, id string) string {
	if usableNow(ctx, store) != nil {
		return id
	}
	for seen := 0; seen < maxDepth+1; seen++ {
		in, err := inspect(store, id)
		if err != nil || in.State.Parent == nil || in.State.Lineage != nil {
			return id
		}
		id = in.State.Parent.Agent
	}
	return id
}
