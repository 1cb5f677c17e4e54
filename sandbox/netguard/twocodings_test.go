package netguard

import (
	"bytes"
	"compress/gzip"
	"context"
	"net/http"
	"strings"
	"testing"
)

// Regression: an answer with two Content-Encoding lines, gzip and then br,
// had net/http decode the gzip alone, as the first line asked, and drop
// both lines: to a request that carried a secret, a body still in br, in
// which no secret can be found, was given to the tool as plain, where an
// answer in a coding the host did not ask for is refused. The host
// decodes gzip itself, only for an answer whose one coding is gzip.
func TestAnswerInGzipAndAnotherCodingRefusedWhenASecretWasSent(t *testing.T) {
	inner := "\x0b\x02\x80not searchable\x03" // stands for a br body
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte(inner))
	zw.Close()
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header()["Content-Encoding"] = []string{"gzip", "br"}
		w.Write(gz.Bytes())
	})
	_, err := echoGuard(t, s).RoundTrip(context.Background(), get(s.URL))
	if err == nil || !strings.Contains(err.Error(), `Content-Encoding "gzip, br"`) || !strings.Contains(err.Error(), "refused") {
		t.Errorf("with a secret: %v", err)
	}
	// Without a secret, it is given as it came, its codings named.
	resp, err := guard(t, Rules{Allow: []string{s.hostPort()}}).RoundTrip(context.Background(), get(s.URL))
	if err != nil || !bytes.Equal(resp.Body, gz.Bytes()) || strings.Join(resp.Header.Values("Content-Encoding"), ", ") != "gzip, br" {
		t.Fatalf("without a secret: %+v, %v", resp, err)
	}
}
