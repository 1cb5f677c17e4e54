package main

import (
	"strings"
	"testing"
)

// Regression: --max-rounds 1.5 and --max-tokens 1e6 were refused with
// urfave/cli's "parse error", saying nothing of what to write, where an
// agent file takes max_tokens: 1e6; and --max-tokens 0x10 was taken as
// 16. A count is a whole number written in decimal, 1e6 included; what is
// not one is refused, exit 2, saying so.
func TestLimitFlagTakesAWholeNumber(t *testing.T) {
	for _, tt := range []struct{ args, want string }{
		{"resume A --max-rounds 1.5", `invalid value "1.5" for flag -max-rounds: want a whole number, such as 20 or 200000`},
		{"resume A --max-tokens 0x10", `invalid value "0x10" for flag -max-tokens: want a whole number`},
		{"resume A --max-tokens NaN", `invalid value "NaN" for flag -max-tokens: want a whole number`},
		{"resume A --max-tokens 1e30", `invalid value "1e30" for flag -max-tokens: want a whole number`},
		{"resume A --max-tokens 1e6", `agent "A": not found`},
		{"resume A --max-rounds=20", `agent "A": not found`},
		{"resume A --max-rounds -2", "--max-rounds cannot be negative"},
		{"workflow resume W --max-rounds 2.5", `invalid value "2.5" for flag -max-rounds: want a whole number`},
	} {
		code, out, errOut := cairn(t, append(strings.Fields(tt.args), "--store", t.TempDir())...)
		if code != exitUsage || out != "" || !strings.Contains(errOut, tt.want) {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want exit 2 and stderr saying %q", tt.args, code, out, errOut, tt.want)
		}
	}
}
