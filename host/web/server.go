package web

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync"

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
}

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
	cancel context.CancelFunc
}

// New makes a Server.
func New(cfg Config) *Server {
	if cfg.Token == "" {
		cfg.Token = randomHex(32)
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
	if err := s.admit(r); err != nil {
		writeError(w, err.status, err.msg)
		return
	}
	s.mux.ServeHTTP(&jsonErrors{ResponseWriter: w}, r)
}

// jsonErrors turns the plain-text errors of the mux itself (no route 404,
// wrong method 405) into the API's JSON errors; every answer of a handler
// passes through unchanged.
type jsonErrors struct {
	http.ResponseWriter
	plain bool // the answer is a plain-text error, to be written as JSON
}

func (j *jsonErrors) WriteHeader(status int) {
	h := j.Header()
	if status >= 400 && strings.HasPrefix(h.Get("Content-Type"), "text/plain") {
		j.plain = true
		h.Set("Content-Type", "application/json")
		h.Del("Content-Length")
	}
	j.ResponseWriter.WriteHeader(status)
}

func (j *jsonErrors) Write(p []byte) (int, error) {
	if !j.plain {
		return j.ResponseWriter.Write(p)
	}
	if err := json.NewEncoder(j.ResponseWriter).Encode(apiError{Error: strings.TrimSpace(string(p))}); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Unwrap lets http.ResponseController reach the writer beneath (to flush
// an event stream).
func (j *jsonErrors) Unwrap() http.ResponseWriter { return j.ResponseWriter }

// Close pauses the runs the server holds at their boundary, those still
// loading their agent too, and waits for them to end. From its start the
// server begins no run: a resume asked for after it is refused (503), so
// Close may be called while requests are still being answered.
func (s *Server) Close() {
	s.mu.Lock()
	s.closing = true
	for h := range s.live {
		h.cancel()
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

// writeJSON answers with v as JSON.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// apiError is an answer's error: {"error": "..."} and, for a locked
// agent, the holder.
type apiError struct {
	Error  string             `json:"error"`
	Holder *checkpoint.Holder `json:"holder,omitempty"`
}

func writeError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, apiError{Error: msg})
}

// fail answers with a library error, its status chosen by what the error
// is: an id that cannot be an agent's 400, unknown agent or round 404,
// locked 409 with the holder, a request the agent's state does not allow
// (a fork into a workspace that holds files among them) 409, else 500.
func fail(w http.ResponseWriter, err error) {
	var locked *checkpoint.LockedError
	switch {
	case errors.As(err, &locked):
		h := locked.Holder
		writeJSON(w, http.StatusConflict, apiError{Error: err.Error(), Holder: &h})
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
