package host

import (
	"strings"
	"testing"
)

// A size in an agent file past what cairn counts was refused naming the
// number without its unit ("17179869184") and saying to give a whole
// number with a unit, which it was. It is refused naming the size as
// written and the largest in its unit.
func TestAgentFileSizeTooLargeNamesTheLargest(t *testing.T) {
	const head = "name: a\nmodel: {provider: script}\ntools: [{module: builtin}]\n"
	for size, largest := range map[string]string{
		"17179869184GiB":       "4294967296GiB",
		"4294967297GiB":        "4294967296GiB",
		"99999999999999999999": "4611686018427387904",
	} {
		_, err := ParseAgentFile([]byte(head+"sandbox: {memory: "+size+"}\n"), t.TempDir())
		if err == nil || !strings.Contains(err.Error(), `"`+size+`"`) || !strings.Contains(err.Error(), largest) {
			t.Errorf("memory: %s: %v, want it named and the largest, %s", size, err, largest)
		}
	}
}
