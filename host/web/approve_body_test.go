package web

import (
	"net/http"
	"strings"
	"testing"
)

// Regression: approve read its body into deny's fields, so that
// {"reason": "..."} was taken, where the route names no field (as `cairn
// approve` takes no --reason): the approval was recorded, and its
// history line said "approved" with a reason the journal does not keep
// and the web view showed. A field approve does not read is 400, and
// nothing is recorded; {} and no body approve.
func TestApproveReadsNoReason(t *testing.T) {
	f := newFixture(t, Config{Loopback: true})
	f.awaiting("ap")
	var e apiError
	f.decode(f.postRaw("/api/agents/ap/approvals/call_1_0/approve", `{"reason": "looks fine"}`), http.StatusBadRequest, &e)
	if !strings.Contains(e.Error, "reason") {
		t.Errorf("the error does not name the field: %q", e.Error)
	}
	var v agentView
	f.getJSON("/api/agents/ap", &v)
	if len(v.Awaiting) != 1 || strings.Contains(string(f.history("ap")), "approval_decided") {
		t.Fatalf("a refused approval was recorded: %+v\n%s", v, f.history("ap"))
	}
	f.decode(f.postRaw("/api/agents/ap/approvals/call_1_0/approve", `{}`), http.StatusOK, nil)
}
