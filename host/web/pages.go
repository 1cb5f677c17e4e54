package web

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/cairnrun/cairn/checkpoint"
)

// pageSize is how many agents an answer of GET /api/agents, or of an
// agent's children, lists unless ?limit= asks otherwise; maxPageSize the
// most it lists, whatever ?limit= asks.
const pageSize, maxPageSize = 500, 5000

// paging is what a request asks of a list: at most limit of it, those after
// the cursor after (the ids of an agent and of its ancestors in the tree,
// the top's first), and whether ?limit= named the limit.
type paging struct {
	limit int
	after []string
	asked bool
}

// pageOf reads ?limit= and ?after= of r.
//
// # Errors
//
// A limit that is not a number from 1, or a cursor that is not ids, each
// followed by '/' but the last: the request's mistake.
func pageOf(r *http.Request) (paging, error) {
	p := paging{limit: pageSize}
	q := r.URL.Query()
	if s := q.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			return p, fmt.Errorf("limit %q: want a number of agents from 1 (at most %d are listed)", s, maxPageSize)
		}
		p.limit, p.asked = min(n, maxPageSize), true
	}
	if s := q.Get("after"); s != "" {
		p.after = strings.Split(s, "/")
		for _, id := range p.after {
			if err := checkpoint.CheckID(id); err != nil {
				return p, fmt.Errorf("after %q: want the cursor of a Link header's next page, ids joined by '/': %w", s, err)
			}
		}
	}
	return p, nil
}

// setNext names, in the answer's Link header, the next page of the list
// at path: the one after the cursor after.
func setNext(w http.ResponseWriter, path string, p paging, after []string) {
	w.Header().Set("Link", fmt.Sprintf(`<%s>; rel="next"`, nextPage(path, p, after)))
}

// nextPage is the URL of the page of the list at path after the cursor
// after, of the limit p asked.
func nextPage(path string, p paging, after []string) string {
	q := url.Values{"after": {strings.Join(after, "/")}}
	if p.asked {
		q.Set("limit", strconv.Itoa(p.limit))
	}
	next := url.URL{Path: path, RawQuery: q.Encode()}
	return next.String()
}
