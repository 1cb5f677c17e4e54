package mcp

import (
	"context"
	"fmt"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cairnrun/cairn/host"
)

// approver asks the client's user about a call an `ask` rule matches,
// through MCP elicitation. A client that cannot be asked has the call
// denied, and the denial says why.
func approver(ss *sdk.ServerSession) host.Approver {
	return func(ctx context.Context, req host.ApprovalRequest) (host.Decision, error) {
		if !canElicit(ss) {
			return host.Decision{Reason: "the agent file's approval rules say a person must decide on it, " +
				"and this MCP client cannot ask one (it does not support elicitation)"}, nil
		}
		res, err := ss.Elicit(ctx, &sdk.ElicitParams{Mode: "form",
			Message: fmt.Sprintf("cairn: allow %s with %s? (approval rule of agent %s, call %s)",
				req.Call.Tool, req.Call.Input, req.Agent, req.Call.ID),
			RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{}}})
		switch {
		case err != nil:
			return host.Decision{Reason: "asking the MCP client's user failed: " + err.Error()}, nil
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
