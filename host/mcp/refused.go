package mcp

import (
	"context"
	"log/slog"
	"slices"
	"sync"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// The SDK's client leaves out of a tools/list result each tool whose input
// schema has an x-mcp-header it refuses (not a header's name, on a
// property that is not a string, an integer or a boolean, or one name
// twice), saying so only to its logger. cairn keeps the list as the
// server sent it (keepListed, before the SDK filters it) and the reason
// the SDK logs (refusals), so that such a tool is named, with why, where
// it would otherwise be missing without a word.

// listedKey is the context key of a tools/list call's listedTools.
type listedKey struct{}

// listedTools is one tools/list page as the server sent it.
type listedTools struct {
	tools []*sdk.Tool
}

// keepListed is a sending middleware that keeps a tools/list result's
// tools, as the server sent them, in the call's listedTools.
func keepListed(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		res, err := next(ctx, method, req)
		if l, ok := ctx.Value(listedKey{}).(*listedTools); ok {
			if r, ok := res.(*sdk.ListToolsResult); ok && err == nil {
				l.tools = slices.Clone(r.Tools)
			}
		}
		return res, err
	}
}

// withRefused is the tools of a page in the server's order: those the SDK
// kept, and those it left out (the tools of listed not in kept). A nil
// tool, which has no name to give, is not one.
func withRefused(listed, kept []*sdk.Tool) []*sdk.Tool {
	if len(listed) == 0 {
		return kept
	}
	return slices.DeleteFunc(slices.Clone(listed), func(t *sdk.Tool) bool { return t == nil })
}

// refusals is the SDK client's logger: it keeps, by tool name, the error
// of each tool the client left out of a tools/list, and drops the rest.
// It is safe for concurrent use.
type refusals struct {
	mu  sync.Mutex
	why map[string]string
}

var _ slog.Handler = (*refusals)(nil)

func (r *refusals) Enabled(context.Context, slog.Level) bool { return true }
func (r *refusals) WithAttrs([]slog.Attr) slog.Handler       { return r }
func (r *refusals) WithGroup(string) slog.Handler            { return r }

func (r *refusals) Handle(_ context.Context, rec slog.Record) error {
	var tool, why string
	rec.Attrs(func(a slog.Attr) bool {
		switch a.Key {
		case "tool":
			tool = a.Value.String()
		case "error":
			why = a.Value.String()
		}
		return true
	})
	if tool != "" && why != "" {
		r.mu.Lock()
		r.why[tool] = why
		r.mu.Unlock()
	}
	return nil
}

// of says why the client left out the tool named name.
func (r *refusals) of(name string) string {
	r.mu.Lock()
	why := r.why[name]
	r.mu.Unlock()
	if why == "" {
		return "the MCP client refuses its input schema (an x-mcp-header that is not a header's name, on a property that is not a string, an integer or a boolean, or given twice)"
	}
	return "the MCP client refuses its input schema's x-mcp-header: " + why
}
