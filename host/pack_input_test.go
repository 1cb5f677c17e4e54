package host

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Regression: a tool whose input is not an object (guest.Define of a
// string) packed and ran with the script model, and would fail only when
// a real model, which takes object schemas alone, was asked. Pack refuses
// it, saying what to do; an object, or a schema that names no type, packs.
func TestPackRefusesAnInputThatIsNoObject(t *testing.T) {
	wasm, err := os.ReadFile(filepath.Join("testdata", "wat", "answer.wasm"))
	must(t, err)
	manifest := func(schema string) []byte {
		return []byte(`{"abi":1,"tools":[{"name":"say","description":"d","input_schema":` + schema + `}]}`)
	}
	_, err = testEngine.Pack(context.Background(), wasm, manifest(`"{\"type\":\"string\"}"`))
	if err == nil || !strings.Contains(err.Error(), "make its input a struct") {
		t.Fatalf("pack of a string input: %v", err)
	}
	for _, schema := range []string{`"{\"type\":\"object\",\"properties\":{}}"`, `"{}"`} {
		if _, err := testEngine.Pack(context.Background(), wasm, manifest(schema)); err != nil {
			t.Errorf("pack of %s: %v", schema, err)
		}
	}
}
