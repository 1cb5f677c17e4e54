// Package stats is the example tool text_stats: it counts the lines, words
// and bytes of a workspace file and finds its most frequent words. It is
// written with cairn's guest SDK, as any third-party tool would be.
package stats

import (
	"fmt"
	"os"
	"sort"
	"strings"
	"unicode"

	"github.com/cairnrun/cairn/abi"
	"github.com/cairnrun/cairn/guest"
)

// Tool is text_stats.
func Tool() guest.Tool {
	return guest.Define("text_stats",
		"Counts the lines, words and bytes of a text file of the workspace and lists its most frequent words.",
		run, guest.Needs(abi.Needs{Workspace: abi.AccessReadOnly}), guest.Idempotent())
}

// Input is text_stats' arguments.
type Input struct {
	Path string `json:"path" desc:"file path, relative to the workspace"`
	Top  int    `json:"top,omitempty" desc:"how many frequent words to list (default 5)"`
}

func run(c *guest.Call, in Input) (string, error) {
	b, err := os.ReadFile(c.Path(in.Path))
	if err != nil {
		return "", fmt.Errorf("read %s: %v", in.Path, err)
	}
	return Describe(string(b), in.Top), nil
}

// Describe is text_stats' answer for a text.
func Describe(text string, top int) string {
	if top <= 0 {
		top = 5
	}
	words := strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && r != '\''
	})
	lines := strings.Count(text, "\n")
	if text != "" && !strings.HasSuffix(text, "\n") {
		lines++
	}
	var out strings.Builder
	fmt.Fprintf(&out, "%d lines, %d words, %d bytes\n", lines, len(strings.Fields(text)), len(text))
	for _, wc := range frequent(words, top) {
		fmt.Fprintf(&out, "%s %d\n", wc.word, wc.n)
	}
	return out.String()
}

type wordCount struct {
	word string
	n    int
}

// frequent returns the top words of at least four letters, most frequent
// first, ties in alphabetical order.
func frequent(words []string, top int) []wordCount {
	counts := map[string]int{}
	for _, w := range words {
		if len([]rune(w)) >= 4 {
			counts[w]++
		}
	}
	list := make([]wordCount, 0, len(counts))
	for w, n := range counts {
		list = append(list, wordCount{w, n})
	}
	sort.Slice(list, func(i, j int) bool {
		if list[i].n != list[j].n {
			return list[i].n > list[j].n
		}
		return list[i].word < list[j].word
	})
	return list[:min(top, len(list))]
}
