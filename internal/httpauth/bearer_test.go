package httpauth

import (
	"net/http"
	"testing"
)

func TestBearer(t *testing.T) {
	for header, want := range map[string]string{
		"Bearer abc":  "abc",
		"bearer abc":  "abc", // the scheme is case-insensitive (it was once refused)
		"BEARER  abc": "abc",
		"Basic abc":   "",
		"Bearerabc":   "",
		"":            "",
	} {
		r, _ := http.NewRequest("GET", "/", nil)
		r.Header.Set("Authorization", header)
		if got, ok := Bearer(r); got != want || ok != (want != "") {
			t.Errorf("%q: %q, %v; want %q", header, got, ok, want)
		}
	}
}
