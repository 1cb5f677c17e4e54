package abi

import "testing"

// Regression: a response header value that is not UTF-8 (obs-text, as a
// Content-Disposition with a Latin-1 file name has), which HTTP allows and
// net/http passes on, made the whole response unreadable to the tool:
// "decode HTTP response: ... a text string that is not UTF-8". A host
// before the one that sends such a value as text sent it as it came; a
// tool built now reads it too, each byte as the Latin-1 character it is.
func TestHTTPResponseWithLatin1HeaderDecodes(t *testing.T) {
	b, err := Marshal(HTTPResponse{ABI: Version, Status: 200, Header: map[string][]string{"Content-Disposition": {"attachment; filename=\"caf\xe9.txt\""}}, Body: []byte("ok")})
	if err != nil {
		t.Fatal(err)
	}
	r, err := DecodeHTTPResponse(b)
	if err != nil || r.Status != 200 || string(r.Body) != "ok" || r.Header["Content-Disposition"][0] != "attachment; filename=\"café.txt\"" {
		t.Fatalf("decoded %+v, %v", r, err)
	}
	b, _ = Marshal(HTTPResponse{ABI: Version, Error: "malformed MIME header line: X\xe9: y"})
	if r, err := DecodeHTTPResponse(b); err != nil || r.Error != "malformed MIME header line: X\uFFFD: y" {
		t.Fatalf("decoded %+v, %v", r, err)
	}
}

func TestHeaderText(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", ""},
		{"plain", "plain"},
		{"café", "café"},
		{"caf\xe9", "café"},
		{"\xc3\xa9\xff", "Ã©ÿ"}, // not UTF-8 as a whole: every byte is one character
	} {
		if got := HeaderText(tc.in); got != tc.want {
			t.Errorf("HeaderText(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
