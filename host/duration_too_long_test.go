package host

import (
	"strings"
	"testing"
)

// A duration in an agent file past what cairn counts was refused as
// `time: invalid duration "9999999h"`, as if it were no duration, without
// the longest allowed. It is refused naming it as written and the longest.
func TestAgentFileDurationTooLongNamesTheLongest(t *testing.T) {
	const head = "name: a\nmodel: {provider: script}\n"
	for _, body := range []string{
		"tools: [{module: builtin}]\nsandbox: {timeout: %s}\n",
		"tools: [{module: builtin}]\nlimits: {max_time: %s}\n",
		"tools: [{module: builtin, limits: {timeout: %s}}]\n",
		"tools: [{module: builtin, grant: {net: {allow: [example.com], timeout: %s}}}]\n",
	} {
		for _, d := range []string{"9999999h", "2562048h", "99999999999999999999s", "1000000000000000000000ns"} {
			_, err := ParseAgentFile([]byte(head+strings.Replace(body, "%s", d, 1)), t.TempDir())
			if err == nil || !strings.Contains(err.Error(), `"`+d+`"`) || !strings.Contains(err.Error(), "2562047h47m16.854775807s") {
				t.Errorf("%q: %v, want it named and the longest, 2562047h47m16.854775807s", strings.Replace(body, "%s", d, 1), err)
			}
		}
	}
	// What is no duration is refused as before, and the longest is taken.
	for d, ok := range map[string]bool{"2562047h47m16.854775807s": true, "2562047h": true, "1x": false, "h": false, "9999999": false} {
		_, err := ParseAgentFile([]byte(head+"tools: [{module: builtin}]\nsandbox: {timeout: "+d+"}\n"), t.TempDir())
		if (err == nil) != ok || err != nil && strings.Contains(err.Error(), "longest") {
			t.Errorf("timeout %q: %v, want taken %v", d, err, ok)
		}
	}
}
