package model

import (
	"fmt"
	"strings"
	"testing"
)

// BenchmarkParseScript parses a script of 5,000 turns of one tool call,
// as a long agent's script is parsed at each resume.
//
//	go test ./host/model -run '^$' -bench ParseScript
func BenchmarkParseScript(b *testing.B) {
	for _, turns := range []int{50, 5000} {
		b.Run(fmt.Sprint(turns), func(b *testing.B) {
			var s strings.Builder
			s.WriteString("turns:\n")
			for range turns {
				s.WriteString("  - tool_calls: [{name: read_file, input: {path: f.txt}}]\n")
			}
			s.WriteString("  - text: done\n")
			data := []byte(s.String())
			b.ReportAllocs()
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				if _, err := ParseScript(data); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
