package text

import (
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/cairnrun/cairn/guest"
	"github.com/cairnrun/cairn/guest/nethttp"
)

// DefaultMaxChars bounds the text the tool answers with, unless the call
// asks for less.
const DefaultMaxChars = 64 << 10

// Input is what the model passes.
type Input struct {
	URL      string `json:"url" desc:"the http or https URL to fetch"`
	MaxChars int    `json:"max_chars,omitempty" desc:"the most characters of text to answer with (default and at most 65536)"`
}

// Tool is the fetch tool. It needs a network grant; what it may reach is
// the grant's (its manifest asks for no host in particular).
func Tool() guest.Tool {
	return guest.Define("fetch", "Fetches a web page or text document by URL and answers with its readable text "+
		"(HTML reduced to text), size-capped.", Fetch)
}

// Fetch fetches in.URL through the host and answers with its text.
func Fetch(_ *guest.Call, in Input) (string, error) {
	resp, err := nethttp.Client().Get(in.URL)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", err
	}
	text, err := Readable(resp.Header.Get("Content-Type"), body)
	if err != nil {
		return "", fmt.Errorf("%s: %w", in.URL, err)
	}
	head := fmt.Sprintf("%s — %d %s\n\n", resp.Request.URL, resp.StatusCode, http.StatusText(resp.StatusCode))
	return head + capped(text, in.MaxChars), nil
}

// Readable is a response body as text: HTML reduced, other text as it
// is. A body that is neither (an image, an archive) is refused.
func Readable(contentType string, body []byte) (string, error) {
	mt, _, _ := mime.ParseMediaType(contentType)
	lead := strings.ToLower(strings.TrimSpace(string(body[:min(len(body), 512)])))
	switch {
	case strings.Contains(mt, "html") || strings.HasPrefix(lead, "<!doctype html") || strings.HasPrefix(lead, "<html"):
		return FromHTML(string(body)), nil
	case mt == "" || strings.HasPrefix(mt, "text/") || strings.Contains(mt, "json") || strings.Contains(mt, "xml"):
		if !utf8.Valid(body) {
			return strings.ToValidUTF8(string(body), "\uFFFD"), nil
		}
		return string(body), nil
	}
	return "", fmt.Errorf("a %s document is not text", mt)
}

// capped is text cut to max characters (DefaultMaxChars when max is 0 or
// more), saying so.
func capped(text string, max int) string {
	if max <= 0 || max > DefaultMaxChars {
		max = DefaultMaxChars
	}
	if utf8.RuneCountInString(text) <= max {
		return text
	}
	r := []rune(text)
	return string(r[:max]) + fmt.Sprintf("\n\n[cut at %d of %d characters]", max, len(r))
}
