// Command oddserver is an MCP server, spoken to over stdio, that lists
// tools no SDK would let a server list, for the tests of what cairn
// makes of a server's tools. It speaks JSON-RPC a line at a time itself.
//
// Its argument says what it lists besides the tool ok (which takes an
// object with a string x): names, tools whose names model providers
// refuse ("a b/c", 300 bytes, "ünï", ""); noschema, a tool bare without
// an input schema; read_file, a tool of that name; cursor-repeat, a
// tools/list whose every page gives the cursor "0"; cursor-endless, one
// whose every page gives a new cursor; schemas, tools whose input
// schemas are not of type object ({"type": "string"}, {"type":
// ["object", "null"]}, true); twice, the tool ok listed twice; header,
// tools whose input schemas have an x-mcp-header the Go SDK's client
// refuses (one with a space in its header name, one on an object
// property), which it leaves out of tools/list; batch, the tools batched
// and hugebatch, whose calls are answered in a JSON-RPC batch, a response
// to a request never sent before the answer, its id written as a fraction
// (7.0 for 7), and, for hugebatch, that response of 1 MiB. A call of
// any tool answers "called NAME with ARGUMENTS".
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
)

type message struct {
	ID     json.RawMessage `json:"id,omitempty"`
	Method string          `json:"method,omitempty"`
	Params json.RawMessage `json:"params,omitempty"`
}

func main() {
	mode := strings.Join(os.Args[1:], " ")
	tools := []map[string]any{{"name": "ok", "description": "fine",
		"inputSchema": map[string]any{"type": "object", "properties": map[string]any{"x": map[string]any{"type": "string"}}}}}
	object := map[string]any{"type": "object"}
	switch mode {
	case "names":
		for _, n := range []string{"a b/c", strings.Repeat("x", 300), "ünï", ""} {
			tools = append(tools, map[string]any{"name": n, "description": "odd", "inputSchema": object})
		}
	case "noschema":
		tools = append(tools, map[string]any{"name": "bare", "description": "no input schema"})
	case "schemas":
		for n, s := range map[string]any{"str": map[string]any{"type": "string"}, "either": map[string]any{"type": []string{"object", "null"}}, "yes": true} {
			tools = append(tools, map[string]any{"name": n, "description": "odd schema", "inputSchema": s})
		}
	case "header":
		tools = append(tools,
			map[string]any{"name": "spaced", "description": "a header name with a space", "inputSchema": map[string]any{"type": "object",
				"properties": map[string]any{"region": map[string]any{"type": "string", "x-mcp-header": "Region Name"}}}},
			map[string]any{"name": "nested", "description": "a header on an object", "inputSchema": map[string]any{"type": "object",
				"properties": map[string]any{"where": map[string]any{"type": "object", "x-mcp-header": "Where"}}}})
	case "twice":
		tools = append(tools, tools[0])
	case "batch":
		for _, n := range []string{"batched", "hugebatch"} {
			tools = append(tools, map[string]any{"name": n, "description": "answered in a batch", "inputSchema": object})
		}
	case "read_file":
		tools = append(tools, map[string]any{"name": "read_file", "description": "reads elsewhere", "inputSchema": object})
	}
	out := json.NewEncoder(os.Stdout)
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(nil, 1<<20)
	page := 0
	for sc.Scan() {
		var m message
		if json.Unmarshal(sc.Bytes(), &m) != nil || m.ID == nil {
			continue
		}
		var result any
		switch m.Method {
		case "initialize":
			var p struct {
				ProtocolVersion string `json:"protocolVersion"`
			}
			json.Unmarshal(m.Params, &p)
			result = map[string]any{"protocolVersion": p.ProtocolVersion, "capabilities": map[string]any{"tools": map[string]any{}},
				"serverInfo": map[string]any{"name": "odd", "version": "1"}}
		case "tools/list":
			page++
			res := map[string]any{"tools": tools}
			switch mode {
			case "cursor-repeat":
				res["nextCursor"] = "0"
			case "cursor-endless":
				res["nextCursor"] = fmt.Sprintf("c%d", page)
			}
			result = res
		case "tools/call":
			var p struct {
				Name      string          `json:"name"`
				Arguments json.RawMessage `json:"arguments"`
			}
			json.Unmarshal(m.Params, &p)
			text := fmt.Sprintf("called %s with %s", p.Name, p.Arguments)
			result = map[string]any{"content": []any{map[string]any{"type": "text", "text": text}}}
			if p.Name == "batched" || p.Name == "hugebatch" {
				writeBatch(m.ID, result, map[string]int{"batched": 10, "hugebatch": 1 << 20}[p.Name])
				continue
			}
		case "ping":
			result = map[string]any{}
		default:
			out.Encode(map[string]any{"jsonrpc": "2.0", "id": m.ID, "error": map[string]any{"code": -32601, "message": "no " + m.Method}})
			continue
		}
		out.Encode(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": result})
	}
}

// writeBatch answers the request of id with result in a JSON-RPC batch,
// after a response of size bytes of data to a request never sent (the
// Go SDK's client fails on a second batch that holds a notification), the
// id written as a fraction if it is an integer (7.0 for 7).
func writeBatch(id json.RawMessage, result any, size int) {
	if _, err := strconv.Atoi(string(id)); err == nil {
		id = append(id, ".0"...)
	}
	stray, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": "nobody-asked", "result": map[string]any{"data": strings.Repeat("n", size)}})
	answer, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "result": result})
	fmt.Printf("[%s,%s]\n", stray, answer)
}
