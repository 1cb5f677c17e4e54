package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/host/model"
)

// Memory that outlives a session: an agent file with `memory: NAMESPACE`
// gives the model three tools over that namespace of the store
// (checkpoint.Memory). remember stores a short fact under a key, with the
// agent, round and call that wrote it; recall finds facts by key or by a
// word they contain; forget removes one. Facts stay when the agent is run
// --fresh, forked or removed, and every agent naming the namespace sees
// them.
//
// A write is a native call like any other: journaled as executing before
// it runs, its result (which carries the fact) durable before the write is
// made. The write itself is the result's effect, made when the round
// settles; a crash between the durable result and the round's commit
// makes resume keep the result and make the write again, and since a
// write is a put by key, the fact is stored once.

// The memory tools' names.
const (
	rememberName = "remember"
	recallName   = "recall"
	forgetName   = "forget"
)

const (
	rememberSchema = `{"type":"object","required":["key","fact"],"additionalProperties":false,"properties":{` +
		`"key":{"type":"string","minLength":1,"maxLength":100},"fact":{"type":"string","minLength":1,"maxLength":4096}}}`
	recallSchema = `{"type":"object","additionalProperties":false,"properties":{` +
		`"key":{"type":"string","maxLength":100},"query":{"type":"string","maxLength":200}}}`
	forgetSchema = `{"type":"object","required":["key"],"additionalProperties":false,"properties":{` +
		`"key":{"type":"string","minLength":1,"maxLength":100}}}`
)

// memoryTools gives an agent file that names a namespace its memory tools.
func memoryTools(af *AgentFile) ([]nativeTool, error) {
	if af.Memory == "" {
		return nil, nil
	}
	if err := checkpoint.CheckMemoryNamespace(af.Memory); err != nil {
		return nil, fmt.Errorf("memory: %w", err)
	}
	ns := memoryNS(af.Memory)
	return []nativeTool{remember{ns}, recall{ns}, forget{ns}}, nil
}

// memoryNS is a namespace the tools of one agent work in.
type memoryNS string

// of is the store's memory: an error the model reads when the store keeps
// none.
func (ns memoryNS) of(c *nativeCall) (checkpoint.Memory, error) {
	m, ok := c.Store.(checkpoint.Memory)
	if !ok {
		return nil, checkpoint.ErrNoMemory
	}
	return m, nil
}

type remember struct{ ns memoryNS }

func (remember) Spec() model.Tool {
	return model.Tool{Name: rememberName, InputSchema: json.RawMessage(rememberSchema),
		Description: "Store a short fact in your long-term memory under a key, replacing any fact of that key. " +
			"It outlives this conversation: later sessions, and other agents sharing your memory, can recall it."}
}

// Call makes the fact the result's effect; Settle stores it.
func (t remember) Call(_ context.Context, c *nativeCall) (nativeResult, error) {
	var in struct{ Key, Fact string }
	if err := json.Unmarshal(c.Input, &in); err != nil {
		return nativeResult{}, fmt.Errorf("%s: %w", rememberName, err)
	}
	if _, err := t.ns.of(c); err != nil {
		return nativeResult{}, err
	}
	f := checkpoint.Fact{Key: in.Key, Text: in.Fact, Agent: c.Agent, Round: c.Round, Call: c.Call.ID, Time: time.Now().UTC()}
	effect, err := checkpoint.EncodeFact(f)
	if err != nil {
		return nativeResult{}, err
	}
	return nativeResult{Output: fmt.Sprintf("Remembered %q in %s.", in.Key, t.ns), Effect: effect}, nil
}

// Settle puts the fact: a put by key, so doing it twice stores it once.
func (t remember) Settle(_ context.Context, c *nativeCall, effect []byte) error {
	m, err := t.ns.of(c)
	if err != nil {
		return err
	}
	f, err := checkpoint.DecodeFact("the journaled fact of call "+c.Call.ID, effect)
	if err != nil {
		return err
	}
	return m.Remember(string(t.ns), f)
}

type recall struct{ ns memoryNS }

func (recall) Spec() model.Tool {
	return model.Tool{Name: recallName, InputSchema: json.RawMessage(recallSchema),
		Description: "Recall facts from your long-term memory: the fact of a key, the facts whose key or text " +
			"contains a query (case-insensitive), or, with neither, every fact."}
}

func (t recall) Call(_ context.Context, c *nativeCall) (nativeResult, error) {
	var in struct{ Key, Query string }
	if err := json.Unmarshal(c.Input, &in); err != nil {
		return nativeResult{}, fmt.Errorf("%s: %w", recallName, err)
	}
	m, err := t.ns.of(c)
	if err != nil {
		return nativeResult{}, err
	}
	facts, err := m.Recall(string(t.ns))
	if err != nil {
		return nativeResult{}, err
	}
	return nativeResult{Output: formatFacts(matching(facts, in.Key, in.Query))}, nil
}

// matching are the facts of key, or those whose key or text contains query.
func matching(facts []checkpoint.Fact, key, query string) []checkpoint.Fact {
	var out []checkpoint.Fact
	q := strings.ToLower(query)
	for _, f := range facts {
		switch {
		case key != "" && f.Key != key:
		case q != "" && !strings.Contains(strings.ToLower(f.Key+"\n"+f.Text), q):
		default:
			out = append(out, f)
		}
	}
	return out
}

// formatFacts writes facts one a line: key, fact, and who wrote it.
func formatFacts(facts []checkpoint.Fact) string {
	if len(facts) == 0 {
		return "No facts found."
	}
	var b strings.Builder
	for i, f := range facts {
		if i > 0 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "%s: %s (agent %s, round %d)", f.Key, f.Text, f.Agent, f.Round)
	}
	return b.String()
}

type forget struct{ ns memoryNS }

func (forget) Spec() model.Tool {
	return model.Tool{Name: forgetName, InputSchema: json.RawMessage(forgetSchema),
		Description: "Remove the fact of a key from your long-term memory."}
}

// Call makes the key the result's effect; Settle removes it.
func (t forget) Call(_ context.Context, c *nativeCall) (nativeResult, error) {
	var in struct{ Key string }
	if err := json.Unmarshal(c.Input, &in); err != nil {
		return nativeResult{}, fmt.Errorf("%s: %w", forgetName, err)
	}
	if _, err := t.ns.of(c); err != nil {
		return nativeResult{}, err
	}
	return nativeResult{Output: fmt.Sprintf("Forgot %q in %s.", in.Key, t.ns), Effect: []byte(in.Key)}, nil
}

// Settle removes the fact; one already gone is no error, so doing it twice
// is doing it once.
func (t forget) Settle(_ context.Context, c *nativeCall, effect []byte) error {
	m, err := t.ns.of(c)
	if err != nil {
		return err
	}
	if err := m.Forget(string(t.ns), string(effect)); err != nil && !errors.Is(err, checkpoint.ErrNotFound) {
		return err
	}
	return nil
}
