package text

import (
	"strings"
	"testing"
)

func TestFromHTML(t *testing.T) {
	doc := `<!DOCTYPE html><html><head><title>A &amp; B</title><style>p{color:red}</style>
<script>alert("x<p>")</script></head><body><h1>Heading</h1><p>One   <b>bold</b>
word.</p><!-- a <p> comment --><ul><li>first</li><li>second &lt;tag&gt;</li></ul><noscript>no</noscript></body></html>`
	want := "# A & B\n\nHeading\n\nOne bold word.\n\n- first\n- second <tag>"
	if got := FromHTML(doc); got != want {
		t.Fatalf("got\n%q\nwant\n%q", got, want)
	}
}

func TestReadable(t *testing.T) {
	if got, err := Readable("text/plain; charset=utf-8", []byte("plain <b>")); err != nil || got != "plain <b>" {
		t.Errorf("text: %q, %v", got, err)
	}
	if got, _ := Readable("", []byte("<!doctype html><p>hi</p>")); got != "hi" {
		t.Errorf("sniffed HTML: %q", got)
	}
	if _, err := Readable("image/png", []byte("\x89PNG")); err == nil {
		t.Error("an image read as text")
	}
	if got := capped(strings.Repeat("é", 10), 4); !strings.HasPrefix(got, "éééé\n\n[cut at 4 of 10") {
		t.Errorf("capped: %q", got)
	}
}

func FuzzFromHTML(f *testing.F) {
	for _, s := range []string{"<p>a</p>", "<script>", "<!--", "<a href='x'>b</a", "&amp;&#x3c;"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		FromHTML(s)
	})
}
