package checkpoint

import (
	"reflect"
	"testing"
)

func TestExchangeRecordRoundTrip(t *testing.T) {
	rec := Record{Type: RecExchange, Round: 3, Call: "c1", Tool: "fetch", Exchange: &Exchange{Seq: 1,
		Step: ExchangeReceived, Status: 200, ResponseHeader: map[string][]string{"Content-Type": {"text/plain"}},
		ResponseDigest: "sha256:ab", ResponseSize: 2, Blob: "sha256:ab"}}
	b, err := encodeRecord(rec)
	if err != nil {
		t.Fatal(err)
	}
	got, err := decodeRecord(RecExchange, b)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, rec) {
		t.Fatalf("got %+v, want %+v", got, rec)
	}
	if _, err := decodeRecord(RecExchange, mustEncode(t, Record{Round: 3})); err == nil {
		t.Fatal("an exchange record without its exchange decoded")
	}
	if !RecExchange.roundScoped() {
		t.Fatal("exchange records must wait for their round's commit")
	}
}

func mustEncode(t *testing.T, rec Record) []byte {
	b, err := encodeRecord(rec)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
