package checkpoint

import (
	"reflect"
	"testing"

	"github.com/cairnrun/cairn/checkpoint/conversation"
)

func TestExchangeRecordRoundTrip(t *testing.T) {
	rec := Record{Type: RecExchange, Round: 3, Call: "c1", Tool: "fetch", Exchange: &conversation.Exchange{Seq: 1,
		Step: conversation.ExchangeReceived, Status: 200, ResponseHeader: map[string][]string{"Content-Type": {"text/plain"}},
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

// Collect keeps the response bodies a committed call's exchanges name.
func TestCollectKeepsExchangeBodies(t *testing.T) {
	s, err := OpenFileStore(t.TempDir())
	must(t, err)
	body, _ := s.PutBlob([]byte("a response body"))
	age(t, s, body)
	lock, err := s.Lock("n", ThisProcess("r"))
	must(t, err)
	log, err := s.Create("n", NewState("n", Definition{}, Labels{}, t0))
	must(t, err)
	turn := &conversation.Message{Role: conversation.RoleAssistant, ToolCalls: []conversation.ToolCall{{ID: "c1", Name: "fetch", Input: "{}"}}}
	must(t, log.Append(Record{Type: RecTurn, Time: t0, Round: 1, Message: turn},
		Record{Type: RecResult, Time: t0, Round: 1, Call: "c1", Tool: "fetch", Result: &Result{Output: "ok",
			Net: []conversation.Exchange{{Seq: 1, Step: conversation.ExchangeReceived, Method: "GET", URL: "http://x/", Status: 200, Blob: body}}}}))
	if _, err := log.Commit(Record{Type: RecCommit, Time: t0, Round: 1}); err != nil {
		t.Fatal(err)
	}
	must(t, log.Close())
	lock.Unlock()
	rec, err := s.Read("n")
	must(t, err)
	if msgs := rec.State.Messages; len(msgs) != 2 || len(msgs[1].Net) != 1 || msgs[1].Net[0].Blob != body {
		t.Fatalf("the committed tool message lacks its exchange: %+v", msgs)
	}
	_, err = s.Collect(Retention{})
	must(t, err)
	if _, err := s.Blob(body); err != nil {
		t.Fatalf("the response body was collected: %v", err)
	}
}
