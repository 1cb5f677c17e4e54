package host

import (
	"strings"
	"testing"
)

// A price or a max_cost that is not a number of dollars (.nan, .inf, or a
// negative price) was taken: .nan turned off max_cost without a word, and a
// price of .nan made the agent's stored cost $-9223372036854.78. The agent
// file is refused, at the line of the value.
func TestAgentFileRefusesACostThatIsNotANumber(t *testing.T) {
	const head = "name: a\nmodel:\n  provider: script\n"
	const tools = "tools: [{module: builtin}]\n"
	for src, want := range map[string]string{
		head + "  price: {input: .nan, output: 1}\n" + tools:   "line 4: model.price.input NaN: want US dollars per million tokens, 0 or more",
		head + "  price: {input: 1, output: .inf}\n" + tools:   "line 4: model.price.output +Inf: want",
		head + "  price: {input: 1, cache_read: -2}\n" + tools: "line 4: model.price.cache_read -2: want",
		head + tools + "limits: {max_cost: .nan}\n":            "limits: max_cost NaN: want US dollars, 0 or more",
		head + tools + "limits: {max_cost: .inf}\n":            "limits: max_cost +Inf: want",
	} {
		if _, err := ParseAgentFile([]byte(src), t.TempDir()); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want an error with %q", src, err, want)
		}
	}
}
