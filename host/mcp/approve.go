package mcp

import (
	"context"
	"encoding/json"
	"fmt"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cairnrun/cairn/host"
)

// approvalKey names the one input request of a call that needs approval.
const approvalKey = "cairn-approval"

// askFirst is the input-required result that asks the client's user about
// a call an `ask` rule matches (MCP elicitation, as a multi round-trip
// request: the SDK asks a client of an older protocol itself and calls the
// handler again with the answer). It is nil when the request already
// carries the answer, or when the client cannot be asked; approver then
// decides.
func askFirst(req *sdk.CallToolRequest, name string, args json.RawMessage, agent string) *sdk.CallToolResult {
	if _, answered := req.Params.InputResponses[approvalKey]; answered || !canElicit(req.Session) {
		return nil
	}
	return &sdk.CallToolResult{InputRequests: sdk.InputRequestMap{approvalKey: &sdk.ElicitParams{Mode: "form",
		Message:         fmt.Sprintf("cairn: allow %s with %s? An approval rule of agent %s says to ask.", name, args, agent),
		RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{}}}}}
}

// approver decides a call an `ask` rule matches from the client's answer
// to askFirst. A client that cannot be asked has the call denied, and the
// denial says why.
func approver(req *sdk.CallToolRequest) host.Approver {
	return func(context.Context, host.ApprovalRequest) (host.Decision, error) {
		if !canElicit(req.Session) {
			return host.Decision{Reason: "the agent file's approval rules say a person must decide on it, " +
				"and this MCP client cannot ask one (it does not support elicitation)"}, nil
		}
		res, ok := req.Params.InputResponses[approvalKey].(*sdk.ElicitResult)
		switch {
		case !ok:
			return host.Decision{Reason: "the MCP client did not answer the question whether to allow it"}, nil
		case res.Action == "accept":
			return host.Decision{Approved: true}, nil
		case res.Action == "decline":
			return host.Decision{Reason: "the MCP client's user declined it"}, nil
		}
		return host.Decision{Reason: "the MCP client's user dismissed the question (" + res.Action + ")"}, nil
	}
}

func canElicit(ss *sdk.ServerSession) bool {
	if ss == nil {
		return false
	}
	p := ss.InitializeParams()
	return p != nil && p.Capabilities != nil && p.Capabilities.Elicitation != nil
}
