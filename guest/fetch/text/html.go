// Package text is cairn's fetch tool: a URL to readable text, fetched
// through the host's network import. HTML is reduced to its text here, in
// the sandbox, so the host never parses what a remote server sent.
package text

import (
	"html"
	"strings"
)

// skipped are the elements whose content is not text a reader sees.
var skipped = map[string]bool{"script": true, "style": true, "noscript": true, "template": true, "svg": true,
	"iframe": true, "object": true}

// inline are the elements that run with the text around them.
var inline = map[string]bool{"a": true, "b": true, "i": true, "em": true, "strong": true, "span": true, "code": true,
	"small": true, "sub": true, "sup": true, "u": true, "abbr": true, "mark": true, "s": true, "q": true, "cite": true,
	"time": true, "label": true, "kbd": true, "var": true, "font": true}

// blocks are the elements that start a new line.
var blocks = map[string]bool{"p": true, "div": true, "br": true, "li": true, "tr": true, "h1": true, "h2": true,
	"h3": true, "h4": true, "h5": true, "h6": true, "section": true, "article": true, "header": true, "footer": true,
	"ul": true, "ol": true, "table": true, "pre": true, "blockquote": true, "hr": true, "title": true, "main": true,
	"nav": true, "dd": true, "dt": true, "figcaption": true}

// FromHTML reduces an HTML document to its readable text: the title and
// the body's text, a line per block, list items marked "- ", without
// scripts, styles or markup, entities decoded, blank runs collapsed. It
// reads any bytes without failing; malformed markup gives rough text.
func FromHTML(doc string) string {
	var out strings.Builder
	skip := ""
	for len(doc) > 0 {
		lt := strings.IndexByte(doc, '<')
		if lt < 0 {
			lt = len(doc)
		}
		if skip == "" {
			out.WriteString(strings.ReplaceAll(html.UnescapeString(doc[:lt]), "\n", " "))
		}
		doc = doc[lt:]
		if doc == "" {
			break
		}
		var name string
		var closing bool
		name, closing, doc = tag(doc)
		switch {
		case skip != "":
			if closing && name == skip {
				skip = ""
			}
		case name == "title" && !closing:
			out.WriteString("\n# ")
		case skipped[name] && !closing:
			skip = name
		case name == "li":
			if !closing {
				out.WriteString("\n- ")
			}
		case blocks[name]:
			out.WriteString("\n")
		case name != "" && !inline[name]:
			out.WriteString(" ")
		}
	}
	return tidy(out.String())
}

// tag reads the markup at the start of doc ("<..."): the lower-case name
// of an element's tag, whether it closes one, and what follows. A comment
// or declaration has no name.
func tag(doc string) (name string, closing bool, rest string) {
	if strings.HasPrefix(doc, "<!--") {
		if end := strings.Index(doc, "-->"); end >= 0 {
			return "", false, doc[end+3:]
		}
		return "", false, ""
	}
	end := strings.IndexByte(doc, '>')
	if end < 0 {
		return "", false, ""
	}
	body := doc[1:end]
	rest = doc[end+1:]
	if strings.HasPrefix(body, "/") {
		closing, body = true, body[1:]
	}
	n := 0
	for n < len(body) && (body[n] >= 'a' && body[n] <= 'z' || body[n] >= 'A' && body[n] <= 'Z' || body[n] >= '0' && body[n] <= '9') {
		n++
	}
	return strings.ToLower(body[:n]), closing, rest
}

// tidy collapses the spaces of each line and runs of blank lines.
func tidy(s string) string {
	var lines []string
	blank := true
	for _, l := range strings.Split(s, "\n") {
		l = strings.Join(strings.Fields(l), " ")
		if l == "" || l == "-" {
			if !blank {
				lines = append(lines, "")
			}
			blank = true
			continue
		}
		lines = append(lines, l)
		blank = false
	}
	return strings.TrimSpace(strings.Join(lines, "\n"))
}
