package host

import (
	"encoding/json"
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/checkpoint/conversation"
)

// TestAppendEvent: an event's line is json.Marshal's bytes, whether
// appendEvent writes it or leaves it to encoding/json; appendEvent leaves
// exactly the events with a field it does not write.
func TestAppendEvent(t *testing.T) {
	at := time.Date(2026, 11, 27, 9, 54, 41, 123456789, time.UTC)
	usage := &conversation.Usage{InputTokens: 120, OutputTokens: 7, CacheReadTokens: 3, CostMicroUSD: 42, NetRequests: 1, NetSentBytes: 2, NetReceivedBytes: 3}
	for _, tt := range []struct {
		name  string
		e     Event
		plain bool
	}{
		{"model turn", Event{Type: EventModelTurn, Time: at, Agent: "a1", Run: "r1", Round: 3, Calls: 1, Usage: &conversation.Usage{InputTokens: 12}}, true},
		{"sub-agent", Event{Type: EventRoundEnd, Time: at, Agent: "a1.b", Run: "r2", Parent: "a1", Depth: 2, Round: 1, Usage: usage}, true},
		{"tool start", Event{Type: EventToolStart, Time: at, Agent: "a", Run: "r", Round: 3, Call: &Call{ID: "call_3_0", Tool: "read_file", Input: `{"path":"<f>.txt"}`, Unsandboxed: true}}, true},
		{"tool end", Event{Type: EventToolEnd, Time: at, Round: 3, Call: &Call{ID: "c", Tool: "t", Outcome: OutcomeError, Output: "a line\n\t\"quoted\" & \\ \x01 \x7f \u2028\u2029 é \xff", DurationMS: 0.012, Stderr: "log"}}, true},
		{"tiny duration", Event{Type: EventToolEnd, Time: at, Call: &Call{ID: "c", Tool: "t", DurationMS: 1e-7}}, true},
		{"huge duration", Event{Type: EventToolEnd, Time: at, Call: &Call{ID: "c", Tool: "t", DurationMS: -2.5e22}}, true},
		{"saved", Event{Type: EventCheckpointSaved, Time: at, Round: 9, Bytes: 1 << 40}, true},
		{"loaded", Event{Type: EventCheckpointLoaded, Time: at, Round: 9, Messages: 30}, true},
		{"run end", Event{Type: EventRunEnd, Time: at, Status: StatusPaused, Reason: "reached max_rounds", Round: -1}, true},
		{"resumed", Event{Type: EventAgentResumed, Time: at, ResumedFrom: "r0", Strategy: "seal", Text: "x"}, true},
		{"zero", Event{}, true},
		{"another zone", Event{Type: EventWarning, Time: at.In(time.FixedZone("X", -(23*3600 + 59*60)))}, true},
		{"call net", Event{Type: EventToolEnd, Time: at, Call: &Call{ID: "c", Tool: "t", Net: &NetUsage{Requests: 1}}}, false},
		{"sealed", Event{Type: EventAgentResumed, Time: at, Sealed: []Seal{{Call: "c", Tool: "t"}}, Finished: []string{"d"}}, false},
		{"empty list", Event{Type: EventAgentResumed, Time: at, Resumed: []string{}}, false},
		{"paths", Event{Type: EventEffectsApplied, Time: at, Paths: []string{"f"}}, false},
		{"labels", Event{Type: EventRunStart, Time: at, Labels: &checkpoint.Labels{Tenant: "t"}}, false},
		{"todos", Event{Type: EventTodos, Time: at, Todos: []checkpoint.Todo{{Text: "x", Status: "pending"}}}, false},
		{"compaction", Event{Type: EventContextCompacted, Time: at, Compaction: &checkpoint.Compaction{Round: 2}}, false},
		{"year 10000", Event{Type: EventWarning, Time: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)}, false},
		{"NaN", Event{Type: EventToolEnd, Time: at, Call: &Call{DurationMS: math.NaN()}}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			want, werr := json.Marshal(&tt.e)
			got, ok := appendEvent([]byte("x"), &tt.e)
			if ok != tt.plain {
				t.Fatalf("appendEvent wrote it: %v, want %v", ok, tt.plain)
			}
			if ok && (werr != nil || string(got[1:]) != string(want) || got[0] != 'x') {
				t.Fatalf("appendEvent:\n%s\njson.Marshal (error %v):\n%s", got, werr, want)
			}
			var l eventLine
			encoded := l.encode(&tt.e)
			switch {
			case werr == nil && (!encoded || l.buf.String() != string(want)+"\n"):
				t.Fatalf("line %q (encoded %v), want %q", l.buf.String(), encoded, want)
			case werr != nil && (encoded || l.buf.Len() != 0):
				t.Fatalf("line %q (encoded %v) of an event json refuses (%v)", l.buf.String(), encoded, werr)
			}
		})
	}
}

// FuzzAppendEvent: whatever the strings, numbers and times of an event
// appendEvent writes, its bytes are json.Marshal's.
func FuzzAppendEvent(f *testing.F) {
	f.Add("tool_end", "a1", "r1", "<out>\n\xff\u2028", "in", 3, int64(7), 0.25, int64(1700000000123456789), true)
	f.Add("", "", "", "", "", 0, int64(0), 0.0, int64(0), false)
	f.Add("x", "\"", "\\", "\x00\x1f", "&", -1, int64(-1), 1e21, int64(-62135596800000000), false)
	f.Fuzz(func(t *testing.T, typ, agent, run, text, input string, round int, n int64, ms float64, nanos int64, call bool) {
		e := Event{Type: EventType(typ), Time: time.Unix(0, nanos).UTC(), Agent: agent, Run: run, Parent: input, Depth: round,
			Round: round, Text: text, Calls: round, Bytes: n, Reason: text, Status: Status(input),
			Usage: &conversation.Usage{InputTokens: n, OutputTokens: -n, CacheWriteTokens: n}}
		if call {
			e.Call = &Call{ID: agent, Tool: typ, Input: input, Outcome: Outcome(run), Output: text, DurationMS: ms, Stderr: text}
		}
		want, werr := json.Marshal(&e)
		got, ok := appendEvent(nil, &e)
		if ok && (werr != nil || string(got) != string(want)) {
			t.Fatalf("appendEvent:\n%s\njson.Marshal (error %v):\n%s", got, werr, want)
		}
		if !ok && werr == nil && !math.IsNaN(ms) && !math.IsInf(ms, 0) {
			t.Fatalf("appendEvent left to encoding/json an event it writes: %s", want)
		}
	})
}

// TestAppendEventWritesEveryField sets each field of an event (and of its
// call and usage) in turn: appendEvent writes json.Marshal's bytes or
// leaves the event to encoding/json. A field added to Event that
// appendEvent does not know fails here, rather than going missing from
// every history.
func TestAppendEventWritesEveryField(t *testing.T) {
	at := time.Date(2026, 11, 27, 9, 54, 41, 0, time.UTC)
	for _, path := range fieldPaths(reflect.TypeFor[Event](), nil) {
		e := Event{Type: EventToolEnd, Time: at}
		setPath(reflect.ValueOf(&e).Elem(), path)
		want, err := json.Marshal(&e)
		if err != nil {
			t.Fatal(err)
		}
		if got, ok := appendEvent(nil, &e); ok && string(got) != string(want) {
			t.Errorf("with %v set, appendEvent writes\n%s\njson.Marshal\n%s", path, got, want)
		}
	}
}

// fieldPaths lists the paths of t's exported fields, and of the fields of
// the structs they point to.
func fieldPaths(t reflect.Type, prefix []int) [][]int {
	var paths [][]int
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		path := append(append([]int{}, prefix...), i)
		paths = append(paths, path)
		if f.Type.Kind() == reflect.Pointer && f.Type.Elem().Kind() == reflect.Struct {
			paths = append(paths, fieldPaths(f.Type.Elem(), path)...)
		}
	}
	return paths
}

// setPath makes the field at path of v non-zero, making the structs on
// the way to it.
func setPath(v reflect.Value, path []int) {
	for _, i := range path {
		if v.Kind() == reflect.Pointer {
			if v.IsNil() {
				v.Set(reflect.New(v.Type().Elem()))
			}
			v = v.Elem()
		}
		v = v.Field(i)
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString("x")
	case reflect.Int, reflect.Int64, reflect.Int32:
		v.SetInt(7)
	case reflect.Float64:
		v.SetFloat(1.5)
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
	case reflect.Map:
		v.Set(reflect.MakeMap(v.Type()))
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
	}
}
