package web

import (
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cairnrun/cairn/host"
)

// handleEvents plays back an agent's events through host.ReadHistory, the
// code path of `cairn events`: each line is the one `cairn events --json`
// prints, byte for byte. ?run=ID keeps one run's; ?after=N skips the
// first N lines of the history (a history trimmed by `cairn gc
// --keep-rounds` counts the lines it removed: its warning in their place
// is line N, N the number removed). With ?follow=1 (or an Accept of
// text/event-stream) the lines are Server-Sent Events, each line's data
// field with its index as id, sent as they are committed while a process
// runs the agent; an "end" event closes the stream when that run ends.
// A stream the request's end stops first (the server stops) closes with
// no "end": the run may go on. A HEAD does not follow. Without, the
// answer is JSON Lines.
func (s *Server) handleEvents(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	after, err := afterOf(r)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	sse, err := wantsStream(r)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	// A HEAD gets the stream's header and ends: following a run to write
	// nothing would hold its connection, unanswered, while the run goes on.
	follow := sse && r.Method != http.MethodHead
	id, only := r.PathValue("id"), q.Get("run")
	// ReadHistory says whether the agent exists and can be read before it
	// writes, without decoding its state, so that an agent the other
	// routes refuse is refused here with the same error; only ?run= reads
	// the state, once, to know its runs.
	if only != "" && !s.hasRun(w, r, id, only) {
		return
	}
	out := newLineWriter(w, sse)
	stop := func() {}
	if follow {
		stop = out.keepAlive()
	}
	n := 0
	err = host.ReadHistoryReady(r.Context(), s.store, id, follow, out.ready, func(e host.Event, line []byte) error {
		n++
		if e.Trimmed() {
			// The lines `cairn gc --keep-rounds` removed keep their
			// numbers, so that a client's Last-Event-ID or after= from
			// before the trim still names the lines it read. A follower
			// whose unread lines a trim removed is given its warning
			// after the lines it had.
			n = int(e.Removed)
		}
		if n <= after || (only != "" && e.Run != only && !e.Skipped()) {
			return nil
		}
		return out.line(n, line)
	})
	stop()
	if err != nil && !out.started {
		s.fail(w, r, err)
		return
	}
	if follow && err == nil && r.Context().Err() != nil {
		// The request ended before the run did: the server stops (or
		// the client left). "end" would say the run ended; the stream
		// closes without it, as one the network cut, and an EventSource
		// reconnects from its Last-Event-ID.
		out.start()
		return
	}
	out.end(err)
}

// hasRun answers 404, as `cairn events --run` exits 2, when agent id has
// no run named run. It reads the agent once.
func (s *Server) hasRun(w http.ResponseWriter, r *http.Request, id, run string) bool {
	rec, err := s.store.Read(id)
	if err != nil {
		s.fail(w, r, err)
		return false
	}
	for _, have := range rec.State.Runs {
		if have.ID == run {
			return true
		}
	}
	writeError(w, http.StatusNotFound, fmt.Sprintf("agent %s has no run %q; GET /api/agents/%s/runs lists them", id, run, id))
	return false
}

// wantsStream reports whether a request of the events route asks for
// Server-Sent Events: ?follow= true as strconv.ParseBool reads it (1, t,
// true ...), or an Accept header that lists text/event-stream (an
// EventSource sends it alone, other clients among other types).
//
// # Errors
//
// A follow that is no boolean: the request's mistake.
func wantsStream(r *http.Request) (bool, error) {
	if v := r.URL.Query().Get("follow"); v != "" {
		follow, err := strconv.ParseBool(v)
		if err != nil {
			return false, fmt.Errorf("follow %q: want 1 (or true) to follow the run, 0 (or false) to read the history as it is", v)
		}
		if follow {
			return true, nil
		}
	}
	for _, v := range r.Header.Values("Accept") {
		for part := range strings.SplitSeq(v, ",") {
			mt, params, err := mime.ParseMediaType(strings.TrimSpace(part))
			if err == nil && mt == "text/event-stream" && !refused(params["q"]) {
				return true, nil
			}
		}
	}
	return false, nil
}

// refused reports whether an Accept header's q says its type is not
// acceptable: q=0.
func refused(q string) bool {
	v, err := strconv.ParseFloat(q, 64)
	return err == nil && v == 0
}

// afterOf reads the Last-Event-ID a reconnecting EventSource sends, or
// else ?after=N. The header wins: an EventSource reconnects to the URL it
// was opened with, whose after= says where the stream began, and
// Last-Event-ID where the client has read to.
//
// # Errors
//
// The one given is not a number of lines; the error names the header or
// the parameter it came in.
func afterOf(r *http.Request) (int, error) {
	name, v := "Last-Event-ID", r.Header.Get("Last-Event-ID")
	if v == "" {
		name, v = "after", r.URL.Query().Get("after")
	}
	if v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%s %q: want the number of lines already read (an event's id, as this stream gives them)", name, v)
	}
	return n, nil
}

// writeTimeout is how long a write to a client may make no progress. A
// client that stops reading but keeps its connection open would
// otherwise hold the stream's goroutine, its file descriptor and its
// buffers for as long as it stays connected; the server has no
// WriteTimeout, which would end every follower's stream, however live.
var writeTimeout = 30 * time.Second

// keepAlive is how long a stream that follows a run goes without a
// write before it sends a comment line, which a client ignores: a proxy
// in front that closes a connection silent for a while (nginx after 60
// seconds) keeps it open, and a client that has gone is found.
var keepAlive = 15 * time.Second

// lineWriter writes history lines as JSON Lines or as Server-Sent Events.
// While keepAlive's goroutine runs, mu orders its writes with those of
// ready and line.
type lineWriter struct {
	w        http.ResponseWriter
	rc       *http.ResponseController
	sse      bool
	mu       sync.Mutex
	started  bool
	extended time.Time // when the write deadline was last set
	wrote    time.Time // when the last line or comment was written
}

func newLineWriter(w http.ResponseWriter, sse bool) *lineWriter {
	return &lineWriter{w: w, rc: http.NewResponseController(w), sse: sse}
}

func (lw *lineWriter) start() {
	if lw.started {
		return
	}
	lw.started = true
	if lw.sse {
		// A proxy must pass each event on as it comes: nginx buffers
		// what X-Accel-Buffering does not forbid it to, and one that
		// compresses or rewrites a body holds it to do so.
		h := lw.w.Header()
		h.Set("Content-Type", "text/event-stream")
		h.Set("X-Accel-Buffering", "no")
		h.Set("Cache-Control", "no-store, no-transform")
	} else {
		lw.w.Header().Set("Content-Type", "application/x-ndjson")
	}
	lw.w.WriteHeader(http.StatusOK)
}

// extend moves the write deadline to writeTimeout from now before a
// write, so that only a client that makes no progress for that long is
// dropped. It moves it only once a thirtieth of writeTimeout has passed
// since it last did, which spares a long playback a deadline per line.
// A writer that cannot have one (http.ErrNotSupported) writes without.
func (lw *lineWriter) extend() {
	now := time.Now()
	if now.Sub(lw.extended) < writeTimeout/30 {
		return
	}
	lw.extended = now
	lw.rc.SetWriteDeadline(now.Add(writeTimeout))
}

// ready begins an event stream once its agent has been checked: its
// header is sent at once, not with its first line, which may come only
// when the run writes its next event, so that a follower who has read
// every line (a reconnection's Last-Event-ID) and a proxy between them
// see the stream open. JSON Lines, a playback that does not wait, begin
// with their first line.
func (lw *lineWriter) ready() {
	if !lw.sse {
		return
	}
	lw.mu.Lock()
	defer lw.mu.Unlock()
	lw.wrote = time.Now()
	lw.start()
	lw.extend()
	lw.rc.Flush()
}

func (lw *lineWriter) line(n int, line []byte) error {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	lw.wrote = time.Now()
	lw.start()
	lw.extend()
	var err error
	if lw.sse {
		_, err = fmt.Fprintf(lw.w, "id: %d\ndata: %s\n\n", n, line)
		if err == nil {
			err = lw.rc.Flush()
		}
	} else {
		_, err = fmt.Fprintf(lw.w, "%s\n", line)
	}
	return err
}

// keepAlive starts sending an SSE stream a comment line whenever it has
// gone keepAlive without a write, once its header is sent, until the
// function it returns is called, which waits for it to stop.
func (lw *lineWriter) keepAlive() (stop func()) {
	done, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		tick := time.NewTicker(keepAlive / 2)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				lw.comment()
			}
		}
	}()
	return func() { close(done); <-stopped }
}

// comment writes a comment line to a stream whose header is sent and
// that has gone keepAlive without a write.
func (lw *lineWriter) comment() {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	if !lw.started || time.Since(lw.wrote) < keepAlive {
		return
	}
	lw.wrote = time.Now()
	lw.extend()
	if _, err := io.WriteString(lw.w, ": keep-alive\n\n"); err == nil {
		lw.rc.Flush()
	}
}

// end closes a stream: an SSE stream says "end", with the error that
// stopped the playback, if any, as its data.
func (lw *lineWriter) end(err error) {
	lw.start()
	if !lw.sse {
		return
	}
	msg := ""
	if err != nil {
		// A line of its own for each of the error's: a newline ends a
		// field, and the client joins data lines with newlines.
		msg = strings.NewReplacer("\r\n", "\ndata: ", "\r", "\ndata: ", "\n", "\ndata: ").Replace(err.Error())
	}
	lw.extend()
	fmt.Fprintf(lw.w, "event: end\ndata: %s\n\n", msg)
	lw.rc.Flush()
}
