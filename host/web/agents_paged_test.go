package web

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"slices"
	"testing"
	"time"

	"github.com/cairnrun/cairn/checkpoint"
)

// nextLink is the URL a Link header names as the next page, or "".
var nextLink = regexp.MustCompile(`<([^>]*)>;\s*rel="next"`)

// page is GET path: its agents, and the URL of the next page, if any.
func (f *fixture) page(path string, v any) string {
	f.t.Helper()
	resp := f.do(path, nil, "")
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	must(f.t, err)
	if resp.StatusCode != http.StatusOK {
		f.t.Fatalf("GET %s: %d %s", path, resp.StatusCode, body)
	}
	must(f.t, json.Unmarshal(body, v))
	if m := nextLink.FindStringSubmatch(resp.Header.Get("Link")); m != nil {
		return m[1]
	}
	return ""
}

// allPages follows the next links from path, and returns each agent
// listed, in order, and how many pages listed them.
func (f *fixture) allPages(path string) ([]agentLine, int) {
	f.t.Helper()
	var all []agentLine
	pages := 0
	for path != "" {
		var list []agentLine
		path = f.page(path, &list)
		all, pages = append(all, list...), pages+1
		if pages > 1000 {
			f.t.Fatalf("more than 1000 pages, the last %s", path)
		}
	}
	return all, pages
}

// storeTree makes, in the store, agents t000 to t<tops-1> and kids
// sub-agents of t001, t001.k000 on.
func storeTree(t *testing.T, store checkpoint.Store, tops, kids int) {
	t.Helper()
	make := func(id string, parent *checkpoint.Parent) {
		lock, err := store.Lock(id, checkpoint.ThisProcess("test"))
		must(t, err)
		defer lock.Unlock()
		st := checkpoint.NewState(id, checkpoint.Definition{Workspace: t.TempDir()}, checkpoint.Labels{}, time.Now())
		st.Status, st.Parent = checkpoint.StatusDone, parent
		log, err := store.Create(id, st)
		must(t, err)
		must(t, log.Close())
	}
	for i := range tops {
		make(fmt.Sprintf("t%03d", i), nil)
	}
	for i := range kids {
		make(fmt.Sprintf("t001.k%03d", i), &checkpoint.Parent{Agent: "t001", Call: "call_1_0", Name: "k", Depth: 1})
	}
}

func ids(list []agentLine) []string {
	out := make([]string, 0, len(list))
	for _, a := range list {
		out = append(out, a.Agent)
	}
	return out
}

// Regression: GET /api/agents answered every agent of the store at once
// (some 200 bytes each), and an agent's children every sub-agent, which
// the page asked for every two seconds. An answer lists 500 at most
// unless ?limit= asks otherwise, and a Link header names the next page
// while more remain: followed, the pages list every agent once, in the
// list's tree order, also when an agent at a page's end is removed
// between two pages.
func TestAgentsListIsPaged(t *testing.T) {
	const tops, kids = 3, 520
	f := newFixture(t, Config{Loopback: true})
	storeTree(t, f.store, tops, kids)

	var whole []agentLine
	if next := f.page("/api/agents?limit=5000", &whole); next != "" || len(whole) != tops+kids {
		t.Fatalf("GET /api/agents?limit=5000: %d agents, next %q; want all %d, no next", len(whole), next, tops+kids)
	}
	if whole[1].Agent != "t001" || whole[2].Agent != "t001.k000" || whole[2].Depth != 1 || whole[kids+2].Agent != "t002" {
		t.Fatalf("the whole list starts %v; want the tree order", ids(whole[:4]))
	}
	var first []agentLine
	if next := f.page("/api/agents", &first); len(first) != 500 || next == "" {
		t.Fatalf("GET /api/agents: %d agents, next %q; want the first 500 and a next page", len(first), next)
	}
	for _, path := range []string{"/api/agents", "/api/agents?limit=7"} {
		all, pages := f.allPages(path)
		if !slices.Equal(ids(all), ids(whole)) || !slices.EqualFunc(all, whole, func(a, b agentLine) bool { return a.Depth == b.Depth }) {
			t.Fatalf("%s followed over %d pages: %d agents; want the %d of the whole list, in its order", path, pages, len(all), len(whole))
		}
	}

	// The page that ends at a sub-agent, which is removed before the next.
	var part []agentLine
	next := f.page("/api/agents?limit=10", &part)
	gone := part[len(part)-1].Agent
	lock, err := f.store.Lock(gone, checkpoint.ThisProcess("test"))
	must(t, err)
	must(t, f.store.Remove(gone))
	lock.Unlock()
	var rest []agentLine
	f.page(next, &rest)
	if gone != "t001.k007" || rest[0].Agent != "t001.k008" {
		t.Fatalf("after %s, removed: the next page starts at %s; want t001.k008", gone, rest[0].Agent)
	}

	for _, q := range []string{"limit=0", "limit=x", "limit=-1", "after=..%2Fx", "after=a%2F%2Fb"} {
		if resp := f.do("/api/agents?"+q, nil, ""); resp.StatusCode != http.StatusBadRequest {
			t.Errorf("GET /api/agents?%s: %d; want 400", q, resp.StatusCode)
		}
	}
}

// An agent's children are paged as the list is: its view lists the
// first 500 and names the next page of GET /api/agents/{id}/children,
// which lists the rest, by id.
func TestAgentChildrenArePaged(t *testing.T) {
	const kids = 520
	f := newFixture(t, Config{Loopback: true})
	storeTree(t, f.store, 2, kids)
	var v struct {
		Children []agentLine `json:"children"`
		Next     string      `json:"children_next"`
	}
	f.getJSON("/api/agents/t001", &v)
	if len(v.Children) != 500 || v.Next == "" {
		t.Fatalf("GET /api/agents/t001: %d children, next %q; want 500 and a next page", len(v.Children), v.Next)
	}
	rest, _ := f.allPages(v.Next)
	all := append(v.Children, rest...)
	if len(all) != kids || !slices.IsSortedFunc(ids(all), func(a, b string) int { return compareIDs(a, b) }) || all[0].Agent != "t001.k000" {
		t.Fatalf("children followed: %d, from %s; want %d, by id", len(all), all[0].Agent, kids)
	}
	small, pages := f.allPages("/api/agents/t001/children?limit=100")
	if len(small) != kids || pages != 6 {
		t.Fatalf("children by 100: %d over %d pages; want %d over 6", len(small), pages, kids)
	}
	v.Children, v.Next = nil, ""
	f.getJSON("/api/agents/t000", &v)
	if len(v.Children) != 0 || v.Next != "" {
		t.Fatalf("an agent with no children: %d children, next %q", len(v.Children), v.Next)
	}
	if resp := f.do("/api/agents/nosuch/children", nil, ""); resp.StatusCode != http.StatusNotFound {
		t.Fatalf("children of no agent: %d; want 404", resp.StatusCode)
	}
}

func compareIDs(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
