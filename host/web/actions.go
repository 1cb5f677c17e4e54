package web

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/host"
)

// maxBody bounds the JSON body of a state change.
const maxBody = 64 << 10

// readBody decodes a request's JSON body into v; an empty body leaves v
// as it is.
func readBody(w http.ResponseWriter, r *http.Request, v any) bool {
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxBody))
	err := dec.Decode(v)
	if err == nil && dec.More() {
		err = errors.New("data after the JSON object")
	}
	if err != nil && !errors.Is(err, io.EOF) {
		writeError(w, http.StatusBadRequest, "request body: "+err.Error()+" (want a JSON object)")
		return false
	}
	return true
}

// handleDecide approves or denies a call with Engine.Decide, as `cairn
// approve` and `cairn deny` do; the body may give {"reason": "..."}.
func (s *Server) handleDecide(approved bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Reason string `json:"reason"`
		}
		if !readBody(w, r, &body) {
			return
		}
		id, call := r.PathValue("id"), r.PathValue("call")
		if err := s.eng.Decide(r.Context(), id, call, host.Decision{Approved: approved, Reason: body.Reason}); err != nil {
			fail(w, err)
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"agent": id, "call": call, "approved": approved})
	}
}

// handleResume resumes an agent with Engine.Resume on a run the server
// holds, as `cairn resume` does, and answers once the run holds the
// agent's lock (202 with its first event) or failed to start (409 with
// the holder for a locked agent). The body may give {"strategy": "seal"}.
func (s *Server) handleResume(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Strategy string `json:"strategy"`
	}
	if !readBody(w, r, &body) {
		return
	}
	strategy, err := host.ParseStrategy(body.Strategy)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	id := r.PathValue("id")
	started, done := s.resume(id, strategy)
	select {
	case e := <-started:
		writeJSON(w, http.StatusAccepted, map[string]any{"agent": id, "run": e.Run, "status": "running"})
	case err := <-done:
		if err != nil {
			fail(w, err)
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"agent": id, "status": "ended"})
	}
}

// resume starts Engine.Resume of an agent on its own goroutine. started
// gets the run's first event, sent once it holds the lock; done gets the
// error that kept it from starting, or nil when it ends.
func (s *Server) resume(id string, strategy host.Strategy) (<-chan host.Event, <-chan error) {
	started, done := make(chan host.Event, 1), make(chan error, 1)
	ctx, cancel := context.WithCancel(context.Background())
	held := &heldRun{cancel: cancel}
	first := true
	opts := host.ResumeOptions{ID: id, Strategy: strategy, OnEvent: func(e host.Event) {
		if first {
			first = false
			s.hold(id, held, e.Run)
			started <- e
		}
	}}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer cancel()
		_, err := s.eng.Resume(ctx, opts)
		s.release(id, held)
		done <- err
	}()
	return started, done
}

func (s *Server) hold(id string, h *heldRun, run string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	h.run = run
	s.runs[id] = h
}

func (s *Server) release(id string, h *heldRun) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.runs[id] == h {
		delete(s.runs, id)
	}
}

func (s *Server) holds(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.runs[id] != nil
}

// handlePause stops a run this server holds at its boundary, as the
// first signal stops `cairn run`: the agent is paused and resume
// continues it. A run another process holds is asked to stop at its next
// boundary with Engine.Pause, as `cairn pause` asks it.
func (s *Server) handlePause(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	s.mu.Lock()
	h := s.runs[id]
	s.mu.Unlock()
	if h == nil {
		s.requestPause(w, r, id)
		return
	}
	h.cancel()
	writeJSON(w, http.StatusAccepted, map[string]any{"agent": id, "run": h.run, "status": "pausing"})
}

// requestPause asks the process that runs agent id to stop it at its next
// boundary: 202 once the request is in the store, 409 when no process
// runs the agent.
func (s *Server) requestPause(w http.ResponseWriter, r *http.Request, id string) {
	err := s.eng.Pause(r.Context(), id)
	switch {
	case errors.Is(err, host.ErrNotRunning):
		writeError(w, http.StatusConflict, err.Error())
	case err != nil:
		fail(w, err)
	default:
		writeJSON(w, http.StatusAccepted, map[string]any{"agent": id, "status": "pause requested"})
	}
}

// handleSnapshot bookmarks an agent with Engine.Snapshot, as `cairn
// snapshot`; the body may give {"label": "..."}.
func (s *Server) handleSnapshot(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Label string `json:"label"`
	}
	if !readBody(w, r, &body) {
		return
	}
	if !names(w, body.Label) {
		return
	}
	b, err := s.eng.Snapshot(r.Context(), r.PathValue("id"), body.Label)
	if err != nil {
		fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, bookmark{Label: b.Label, Round: b.Round, Time: b.Time})
}

// handleFork starts a new agent with Engine.Fork, as `cairn fork`; the
// body may give {"from": LABEL, "as": NEW}. The new workspace is beside
// the original's: a request does not choose paths on the server.
func (s *Server) handleFork(w http.ResponseWriter, r *http.Request) {
	var body struct {
		From string `json:"from"`
		As   string `json:"as"`
	}
	if !readBody(w, r, &body) {
		return
	}
	if !names(w, body.From, body.As) {
		return
	}
	st, err := s.eng.Fork(r.Context(), host.ForkOptions{ID: r.PathValue("id"), From: body.From, As: body.As})
	if err != nil {
		fail(w, err)
		return
	}
	writeJSON(w, http.StatusCreated, map[string]any{"agent": st.Agent, "from": st.From,
		"round": st.Round, "workspace": st.Workspace})
}

// names checks the bookmark label and the agent ids a request gives, so
// that a bad one is the request's fault (400) and names what is wrong.
func names(w http.ResponseWriter, label string, ids ...string) bool {
	var err error
	if label != "" {
		err = checkpoint.CheckLabel(label)
	}
	for _, id := range ids {
		if err == nil && id != "" {
			err = checkpoint.CheckID(id)
		}
	}
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return false
	}
	return true
}
