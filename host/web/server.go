package web

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"path"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/host"
)

// Config says what a Server serves and to whom.
type Config struct {
	// Engine runs the agents the server resumes; its store is the store
	// served.
	Engine *host.Engine
	// Token authorizes requests; empty means a random one (see Token).
	Token string
	// ReadOnly refuses every state-changing request.
	ReadOnly bool
	// Loopback says the server listens on loopback only: reads then need
	// no token, and the Host header must name a loopback address.
	Loopback bool
	// BodyTimeout is how long a request's body may take to arrive, from
	// when the request reaches the server; zero means DefaultBodyTimeout.
	// A request without a body (every GET, an event stream among them)
	// has no such limit.
	BodyTimeout time.Duration
}

// DefaultBodyTimeout is Config.BodyTimeout's default: ample for a body of
// at most 64 KB.
const DefaultBodyTimeout = 30 * time.Second

// Server is the HTTP API and web view over one store.
type Server struct {
	cfg   Config
	eng   *host.Engine
	store checkpoint.Store
	mux   *http.ServeMux
	login *onceNonce
	// readSecret is the value of the login cookie: random, so that it
	// cannot be made into the token, and good for reads only.
	readSecret string

	mu   sync.Mutex
	runs map[string]*heldRun // agent id → a run this server holds, from its first event
	// live are the resumes the server has begun and whose Engine.Resume
	// has not returned, from before each starts: Close stops them all,
	// those still loading the agent too.
	live map[*heldRun]bool
	// closing says Close has begun: no resume starts any more.
	closing bool
	wg      sync.WaitGroup
}

// heldRun is a resume this server runs.
type heldRun struct {
	run    string
	cancel context.CancelCauseFunc
}

// New makes a Server.
func New(cfg Config) *Server {
	if cfg.Token == "" {
		cfg.Token = randomHex(32)
	}
	if cfg.BodyTimeout <= 0 {
		cfg.BodyTimeout = DefaultBodyTimeout
	}
	s := &Server{cfg: cfg, eng: cfg.Engine, store: cfg.Engine.Store(), mux: http.NewServeMux(),
		login: newOnceNonce(), readSecret: randomHex(32), runs: map[string]*heldRun{}, live: map[*heldRun]bool{}}
	s.routes()
	return s
}

// Token is what a request carries as "Authorization: Bearer TOKEN".
func (s *Server) Token() string { return s.cfg.Token }

// LoginPath is a one-time path that sets the read cookie in the browser
// that opens it, gives its tab the token and sends it on to the web view.
func (s *Server) LoginPath() string { return "/login?once=" + s.login.value }

// ServeHTTP checks a request (see the package doc) and answers it.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	securityHeaders(w)
	a := &jsonErrors{ResponseWriter: w, body: s.watchBody(w, r), method: r.Method, path: r.URL.EscapedPath()}
	if err := s.admit(r); err != nil {
		if err.allow != "" {
			a.Header().Set("Allow", err.allow)
		}
		writeError(a, err.status, err.msg)
		return
	}
	if p := r.URL.EscapedPath(); !isClean(p) {
		writeError(a, http.StatusBadRequest, "path "+p+" is not clean (it has an empty, '.' or '..' segment, "+
			"or one that is an escaped '/' alone): no route serves it and it is not redirected; send the path of the route itself")
		return
	}
	if r.Method == http.MethodPost && r.URL.RawQuery != "" {
		writeError(a, http.StatusBadRequest, "a state change reads no query ("+r.URL.RawQuery+"): send its fields in the body, as one JSON object")
		return
	}
	s.mux.ServeHTTP(a, r)
}

// isClean reports whether the escaped path p is clean (cleanPath) and has
// no segment that is an escaped '/' alone ("%2F"), which the mux takes
// for a trailing slash and no route's wildcard.
func isClean(p string) bool {
	if p != cleanPath(p) {
		return false
	}
	for seg := range strings.SplitSeq(p, "/") {
		if strings.EqualFold(seg, "%2F") {
			return false
		}
	}
	return true
}

// cleanPath is p with no empty, "." or ".." segment, its trailing slash
// kept, as http.ServeMux cleans a path. The mux redirects a request whose
// path is not clean to its clean form, with a body of HTML, and a client
// that follows the redirect (Go's resends a POST's body) would reach what
// the dots resolve to: another agent's call. Such a path is refused
// before the mux sees it. An escaped dot or slash ("%2e%2e", "%2F") is
// no segment of its own: the route's id or call check refuses it.
func cleanPath(p string) string {
	if p == "" {
		return "/"
	}
	out := path.Clean(p)
	if strings.HasSuffix(p, "/") && out != "/" {
		out += "/"
	}
	return out
}

// allowed lists the methods the route of r's path serves, as an Allow
// header does ("GET, HEAD" or "POST"); empty when no route serves it.
func (s *Server) allowed(r *http.Request) string {
	var out []string
	for _, m := range []string{http.MethodGet, http.MethodHead, http.MethodPost} {
		probe := r.Clone(r.Context())
		probe.Method = m
		if _, pattern := s.mux.Handler(probe); pattern != "" {
			out = append(out, m)
		}
	}
	return strings.Join(out, ", ")
}

// jsonErrors turns the plain-text errors of the mux itself (no route 404,
// wrong method 405, which then names the methods the route serves) into
// the API's JSON errors; every answer of a handler passes through
// unchanged. An answer given before the request's body has been read
// closes the connection (see watchBody).
type jsonErrors struct {
	http.ResponseWriter
	plain  bool      // the answer is a plain-text error, to be written as JSON
	body   *bodyRead // the request's body, nil for none
	method string    // the request's
	path   string    // the request's, escaped
	status int       // the answer's
}

func (j *jsonErrors) WriteHeader(status int) {
	h := j.Header()
	j.status = status
	if status >= 400 && strings.HasPrefix(h.Get("Content-Type"), "text/plain") {
		j.plain = true
		h.Set("Content-Type", "application/json")
		h.Del("Content-Length")
	}
	if j.body.leave() {
		h.Set("Connection", "close")
	}
	j.ResponseWriter.WriteHeader(status)
}

func (j *jsonErrors) Write(p []byte) (int, error) {
	if !j.plain {
		return j.ResponseWriter.Write(p)
	}
	msg := strings.TrimSpace(string(p))
	if allow := j.Header().Get("Allow"); j.status == http.StatusMethodNotAllowed && allow != "" {
		msg = notServed(j.method, allow)
	}
	if j.status == http.StatusNotFound {
		msg = notFound(j.path)
	}
	if err := json.NewEncoder(j.ResponseWriter).Encode(apiError{Error: msg}); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Unwrap lets http.ResponseController reach the writer beneath (to flush
// an event stream).
func (j *jsonErrors) Unwrap() http.ResponseWriter { return j.ResponseWriter }

// watchBody bounds the time a request's body may take to arrive by
// BodyTimeout, with a read deadline on the connection that is lifted once
// the body has been read to its end, and returns the body, which tells
// whether it has been; nil for a request without a body.
//
// Before it writes an answer to a request whose body it has not read to
// its end, and again before it closes the connection, net/http reads what
// is left of the body, with no deadline but this one: a client that
// announces a body and sends none (a refused request's among them) would
// hold its connection, unanswered. An answer given before the body is
// read therefore closes the connection and reads nothing more of it
// (bodyRead.leave). There is no ReadTimeout on the server: it would bound
// a whole request, an event stream that follows a run for hours among
// them.
func (s *Server) watchBody(w http.ResponseWriter, r *http.Request) *bodyRead {
	if r.Body == nil || r.Body == http.NoBody {
		return nil
	}
	rc := http.NewResponseController(w)
	rc.SetReadDeadline(time.Now().Add(s.cfg.BodyTimeout))
	b := &bodyRead{ReadCloser: r.Body, rc: rc}
	r.Body = b
	return b
}

// bodyRead is a request's body, which says when it has been read to its
// end and then lifts its read deadline.
type bodyRead struct {
	io.ReadCloser
	rc   *http.ResponseController
	done atomic.Bool
}

// leave reports whether the body has not been read to its end, and if
// so lets its read deadline pass at once, so that net/http gives up
// reading what is left of it. A nil bodyRead, no body, has been read.
func (b *bodyRead) leave() bool {
	if b == nil || b.done.Load() {
		return false
	}
	b.rc.SetReadDeadline(time.Now())
	return true
}

func (b *bodyRead) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF && !b.done.Swap(true) {
		b.rc.SetReadDeadline(time.Time{})
	}
	return n, err
}

// Close pauses the runs the server holds at their boundary, those still
// loading their agent too, and waits for them to end. From its start the
// server begins no run: a resume asked for after it is refused (503), so
// Close may be called while requests are still being answered.
func (s *Server) Close() {
	s.mu.Lock()
	s.closing = true
	for h := range s.live {
		h.cancel(errServeStopped)
	}
	s.mu.Unlock()
	s.wg.Wait()
}

func (s *Server) routes() {
	s.mux.HandleFunc("GET /{$}", serveAsset("index.html"))
	s.mux.HandleFunc("GET /assets/{name}", func(w http.ResponseWriter, r *http.Request) {
		serveAsset(r.PathValue("name"))(w, r)
	})
	s.mux.HandleFunc("GET /login", s.handleLogin)
	s.mux.HandleFunc("GET /api/info", s.handleInfo)
	s.mux.HandleFunc("GET /api/agents", s.handleAgents)
	agent := func(pattern string, h http.HandlerFunc) { s.mux.HandleFunc(pattern, agentID(h)) }
	agent("GET /api/agents/{id}", s.handleAgent)
	agent("GET /api/agents/{id}/children", s.handleChildren)
	agent("GET /api/agents/{id}/conversation", s.handleConversation)
	agent("GET /api/agents/{id}/runs", s.handleRuns)
	agent("GET /api/agents/{id}/events", s.handleEvents)
	agent("GET /api/agents/{id}/diff", s.handleDiff)
	agent("GET /api/agents/{id}/approvals", s.handleApprovals)
	agent("POST /api/agents/{id}/approvals/{call}/approve", s.handleDecide(true))
	agent("POST /api/agents/{id}/approvals/{call}/deny", s.handleDecide(false))
	agent("POST /api/agents/{id}/resume", s.handleResume)
	agent("POST /api/agents/{id}/pause", s.handlePause)
	agent("POST /api/agents/{id}/snapshot", s.handleSnapshot)
	agent("POST /api/agents/{id}/fork", s.handleFork)
}

// agentID answers 400 for a route whose {id} cannot be an agent's id
// (checkpoint.CheckID: "..%2Fx", "a%00b", ".hidden" and one over 128
// bytes among them; "-x" is a valid one),
// before the handler or the store sees it: such an id is the request's
// mistake, not an agent that is missing.
func agentID(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if err := checkpoint.CheckID(r.PathValue("id")); err != nil {
			writeError(w, http.StatusBadRequest, err.Error())
			return
		}
		h(w, r)
	}
}

func (s *Server) handleInfo(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{"read_only": s.cfg.ReadOnly})
}

// writeTagged answers with v as JSON, as writeJSON does, tagged with an
// ETag of its bytes: a request whose If-None-Match has that tag (the page
// looking again at an agent that has not changed) is answered 304, with
// no body. The answer stays no-store (securityHeaders): the page keeps
// the tag and what it showed itself, and nothing goes to a disk cache.
func writeTagged(w http.ResponseWriter, r *http.Request, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		writeError(w, http.StatusInternalServerError, err.Error())
		return
	}
	sum := sha256.Sum256(body)
	tag := `"` + hex.EncodeToString(sum[:16]) + `"`
	w.Header().Set("ETag", tag)
	if noneMatch(r.Header.Values("If-None-Match"), tag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	w.Write(append(body, '\n'))
}

// noneMatch reports whether If-None-Match header values name tag, as RFC
// 9110 compares them (13.1.2): "*", or a list of tags, any of which
// matches tag with its weakness (W/) set aside, as a proxy that
// compresses an answer marks its tag weak.
func noneMatch(values []string, tag string) bool {
	for _, v := range values {
		for t := range strings.SplitSeq(v, ",") {
			t = strings.TrimSpace(t)
			if t == "*" || strings.TrimPrefix(t, "W/") == tag {
				return true
			}
		}
	}
	return false
}

// writeJSON answers with v as JSON.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// apiError is an answer's error: {"error": "..."} and, for a locked
// agent, the holder; for an id no agent has that begins sub-agents' ids,
// their ids.
type apiError struct {
	Error  string             `json:"error"`
	Holder *checkpoint.Holder `json:"holder,omitempty"`
	Agents []string           `json:"agents,omitempty"`
}

func writeError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, apiError{Error: msg})
}

// fail answers r with a library error, its status chosen by what the
// error is: an id that cannot be an agent's 400, unknown agent or round
// 404 (an agent id no agent has that begins sub-agents' ids names them, as
// host.AgentsBeginning says, in the error and in "agents"), locked 409
// with the holder, a request the agent's state does not allow (a fork
// into a workspace that holds files among them) 409, else 500.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, err error) {
	var locked *checkpoint.LockedError
	var prefix *host.PrefixError
	err = host.AgentsBeginning(s.store, r.PathValue("id"), err)
	switch {
	case errors.As(err, &locked):
		h := locked.Holder
		writeJSON(w, http.StatusConflict, apiError{Error: err.Error(), Holder: &h})
	case errors.As(err, &prefix):
		writeJSON(w, http.StatusNotFound, apiError{Error: err.Error() + " (GET /api/agents lists them, and GET /api/agents/ID/children the sub-agents of each)",
			Agents: prefix.Agents})
	case errors.Is(err, checkpoint.ErrInvalidID):
		writeError(w, http.StatusBadRequest, err.Error())
	case errors.Is(err, checkpoint.ErrNotFound), errors.Is(err, host.ErrNoChanges), errors.Is(err, host.ErrNoBookmark):
		writeError(w, http.StatusNotFound, err.Error())
	case errors.Is(err, host.ErrNotAwaiting), errors.Is(err, checkpoint.ErrExists), errors.Is(err, host.ErrWorkspaceNotEmpty):
		writeError(w, http.StatusConflict, err.Error())
	default:
		writeError(w, http.StatusInternalServerError, err.Error())
	}
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}
