package web

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"reflect"
	"strings"
	"sync"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/host"
)

// maxBody bounds the JSON body of a state change.
const maxBody = 64 << 10

// readBody decodes a request's JSON body, one object, into v; an empty
// body leaves v as it is. It is strict, so that a mistake is not taken for
// something else: anything but an object (null too), a field v does not
// have (a misspelt "from" would fork from the last round) or anything
// after the object is a bad request (400), a body over maxBody is 413,
// and one that has not all come within Config.BodyTimeout is 408.
func readBody(w http.ResponseWriter, r *http.Request, v any) bool {
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxBody))
	var raw json.RawMessage
	err := dec.Decode(&raw)
	var tooLarge *http.MaxBytesError
	if err == nil {
		err = decodeObject(raw, v)
	}
	if err == nil {
		if _, end := dec.Token(); errors.As(end, &tooLarge) {
			err = end
		} else if end != io.EOF {
			err = errors.New("data after the JSON object")
		}
	}
	switch {
	case err == nil, errors.Is(err, io.EOF):
		return true
	case errors.As(err, &tooLarge):
		writeError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("request body: over %d bytes", tooLarge.Limit))
	case errors.Is(err, os.ErrDeadlineExceeded):
		writeError(w, http.StatusRequestTimeout, "request body: it did not all come in time; send it whole, as its Content-Length says")
	default:
		writeError(w, http.StatusBadRequest, "request body: "+err.Error()+" (want a JSON object of the route's fields)")
	}
	return false
}

// decodeObject decodes one JSON object into v, a pointer to a struct,
// refusing a field v does not have, spelt as v's JSON tag spells it
// (encoding/json alone would take "AS" for "as"), and a field given
// twice (it would take the last). JSON's null, which Decode would take
// for nothing, is no object.
func decodeObject(raw json.RawMessage, v any) error {
	if !bytes.HasPrefix(raw, []byte("{")) {
		return fmt.Errorf("%.20s is not a JSON object", raw)
	}
	if err := checkKeys(raw, v); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

// checkKeys refuses a key of the JSON object raw that no field of the
// struct v points to has as its JSON name, exactly, or that is given
// twice.
func checkKeys(raw json.RawMessage, v any) error {
	names := map[string]bool{}
	t := reflect.TypeOf(v).Elem()
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		names[cmp.Or(name, t.Field(i).Name)] = true
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if _, err := dec.Token(); err != nil { // the object's '{'
		return err
	}
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		key, _ := tok.(string)
		switch {
		case !names[key]:
			return fmt.Errorf("json: unknown field %q", key)
		case seen[key]:
			return fmt.Errorf("field %q is given twice", key)
		}
		seen[key] = true
		var value json.RawMessage
		if err := dec.Decode(&value); err != nil {
			return err
		}
	}
	return nil
}

// handleDecide approves or denies a call with Engine.Decide, as `cairn
// approve` and `cairn deny` do; a denial's body may give {"reason":
// "..."}, and an approval's, as `cairn approve`, gives nothing: {} or
// none.
func (s *Server) handleDecide(approved bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if err := checkCallID(r.PathValue("call")); err != nil {
			writeError(w, http.StatusBadRequest, err.Error())
			return
		}
		var denial struct {
			Reason string `json:"reason"`
		}
		var body any = &denial
		if approved {
			body = &struct{}{}
		}
		if !readBody(w, r, body) {
			return
		}
		id, call := r.PathValue("id"), r.PathValue("call")
		if err := s.eng.Decide(r.Context(), id, call, host.Decision{Approved: approved, Reason: denial.Reason}); err != nil {
			s.fail(w, r, err)
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"agent": id, "call": call, "approved": approved})
	}
}

// maxCallID bounds the call id a decision's path may name; the ids
// models give are a few dozen bytes.
const maxCallID = 256

// checkCallID refuses a call id that a decision's path cannot name: ".",
// "..", one with a '/' or '\\' (escaped in the path as %2F or %5C) or a
// control character, or one over maxCallID bytes. No call of a turn has
// such an id but by a model's whim, and then `cairn approve` decides it;
// the path's own segments are the route's.
func checkCallID(call string) error {
	bad := call == "." || call == ".." || len(call) > maxCallID ||
		strings.ContainsFunc(call, func(r rune) bool { return r == '/' || r == '\\' || r < 0x20 || r == 0x7f })
	if bad {
		return fmt.Errorf("call id %q: cannot be a call's id in a path (not '.' or '..', no '/', '\\' or control character, at most %d bytes); GET the agent's approvals for the ids of the calls that wait, or decide a call whose id the model made so with `cairn approve` or `cairn deny`", call, maxCallID)
	}
	return nil
}

// handleResume resumes an agent with Engine.Resume on a run the server
// holds, as `cairn resume` does, and answers once the run has started
// (202 with its id), or with why none did: 409 with the holder for a
// locked agent, 409 when the agent's last run ended cleanly and there is
// nothing to resume (as `cairn resume` says), 200 when a manual resume
// has reported. The body may give {"strategy": "seal"}.
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
	started, done, err := s.resume(id, strategy)
	if err != nil {
		writeError(w, http.StatusServiceUnavailable, err.Error())
		return
	}
	select {
	case run := <-started:
		writeJSON(w, http.StatusAccepted, map[string]any{"agent": id, "run": run, "status": "running"})
	case end := <-done:
		s.resumeEnded(w, r, id, started, end)
	}
}

// resumeEnded answers r, a resume whose Engine.Resume returned before the
// answer was sent. The run-start signal is sent before Resume returns, so
// it is looked at first: a run that started and ended already is named,
// and one that never started says why.
func (s *Server) resumeEnded(w http.ResponseWriter, r *http.Request, id string, started <-chan string, end resumeEnd) {
	select {
	case run := <-started:
		writeJSON(w, http.StatusOK, map[string]any{"agent": id, "run": run, "status": "ended"})
		return
	default:
	}
	switch {
	case end.err != nil && (errors.Is(end.err, context.Canceled) || errors.Is(end.err, errServeStopped)) && s.stopping():
		writeError(w, http.StatusServiceUnavailable, errClosing.Error()+"; the resume stopped before its run began")
	case end.err != nil:
		s.fail(w, r, end.err)
	case end.res != nil && end.res.Status == host.StatusDone:
		writeError(w, http.StatusConflict, end.res.Reason)
	case end.res != nil:
		writeJSON(w, http.StatusOK, map[string]any{"agent": id, "status": "ended", "reason": end.res.Reason})
	default:
		writeJSON(w, http.StatusOK, map[string]any{"agent": id, "status": "ended"})
	}
}

// resumeEnd is what Engine.Resume returned.
type resumeEnd struct {
	res *host.Result
	err error
}

// Why the server stops a run it holds, the cause of the run's context:
// the run ends with "interrupted: " and it as its reason, as one Ctrl-C
// stops ends with the signal's name.
var (
	errPausedHere   = errors.New("paused through cairn serve (web view or API)")
	errServeStopped = errors.New("cairn serve stopped")
)

// errClosing refuses a resume asked for once Close has begun.
var errClosing = errors.New("cairn serve is stopping: it starts no run now; resume the agent once it is served again, or with `cairn resume`")

// resume starts Engine.Resume of an agent on its own goroutine. started
// gets the run's id once the run has begun (its run_start event): events
// before it, such as checkpoint_loaded, come also from a resume that
// finds nothing to do and starts no run. done gets what Resume returned.
// The resume is registered before it starts, so that Close stops it
// even while it loads the agent; pause reaches it from its first event.
// Once Close has begun, errClosing and nothing started.
func (s *Server) resume(id string, strategy host.Strategy) (<-chan string, <-chan resumeEnd, error) {
	started, done := make(chan string, 1), make(chan resumeEnd, 1)
	ctx, cancel := context.WithCancelCause(context.Background())
	held := &heldRun{cancel: cancel}
	if err := s.begin(held); err != nil {
		cancel(nil)
		return nil, nil, err
	}
	var holding, begun sync.Once
	opts := host.ResumeOptions{ID: id, Strategy: strategy, OnEvent: func(e host.Event) {
		holding.Do(func() { s.hold(id, held, e.Run) })
		if e.Type == host.EventRunStart && e.Agent == id {
			begun.Do(func() { started <- e.Run })
		}
	}}
	go func() {
		defer s.wg.Done()
		defer cancel(nil)
		res, err := s.eng.Resume(ctx, opts)
		s.release(id, held)
		done <- resumeEnd{res, err}
	}()
	return started, done, nil
}

// begin registers a resume about to start, unless Close has begun: the
// check and the WaitGroup's Add are under the lock Close takes to set
// closing, so Close never waits before a run it did not stop.
func (s *Server) begin(h *heldRun) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing {
		return errClosing
	}
	s.live[h] = true
	s.wg.Add(1)
	return nil
}

// stopping reports whether Close has begun.
func (s *Server) stopping() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closing
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
	delete(s.live, h)
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
// boundary with Engine.Pause, as `cairn pause` asks it. The body, if
// any, is an empty object: the route reads no field.
func (s *Server) handlePause(w http.ResponseWriter, r *http.Request) {
	var body struct{}
	if !readBody(w, r, &body) {
		return
	}
	id := r.PathValue("id")
	s.mu.Lock()
	h := s.runs[id]
	s.mu.Unlock()
	if h == nil {
		s.requestPause(w, r, id)
		return
	}
	h.cancel(errPausedHere)
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
		s.fail(w, r, err)
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
		s.fail(w, r, err)
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
		s.fail(w, r, err)
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
