package web

import (
	"net/http"
	"testing"
)

// Regression: If-None-Match was compared with the agent's ETag as one
// string, so the forms RFC 9110 gives it were answered 200 and the whole
// view though the agent was unchanged: the tag made weak (W/"..."), as
// nginx makes it when it compresses the answer and the browser then
// sends it back; a list of tags, as a cache sends; and "*". Each is now
// 304 while the agent is as it was.
func TestIfNoneMatchWeakListOrStarIs304(t *testing.T) {
	f := newFixture(t, Config{Loopback: true})
	f.run("w", doneAgent, doneScript)
	tag := f.do("/api/agents/w", nil, "").Header.Get("ETag")
	for _, c := range []struct {
		header string
		want   int
	}{
		{tag, http.StatusNotModified},
		{"W/" + tag, http.StatusNotModified},
		{`"other", ` + tag, http.StatusNotModified},
		{`W/"other",W/` + tag, http.StatusNotModified},
		{"*", http.StatusNotModified},
		{`"other"`, http.StatusOK},
		{tag[:len(tag)-2] + `"`, http.StatusOK},
		{tag[1 : len(tag)-1], http.StatusOK},
	} {
		if resp := f.do("/api/agents/w", nil, "", "If-None-Match", c.header); resp.StatusCode != c.want {
			t.Errorf("If-None-Match: %s: %s, want %d", c.header, resp.Status, c.want)
		}
	}
}
