package host

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/cairnrun/cairn/host/model"
)

var contextCrashRounds = flag.Int("context-crash-rounds", 120, "rounds of the bounded-context kill -9 test (5000 for the long form)")

// childEnv carries what the child process of the kill -9 test runs.
const childEnv = "CAIRN_CONTEXT_CHILD"

type childJob struct {
	Store, Agent, Cache, Out string
	Cuts                     int // the child stops at the first turn request after this many cuts
}

// A real process runs an agent of many rounds under a context budget and
// is killed with SIGKILL while its model holds the first request after a
// cut (the cut journaled, not yet synced). Resume sends the model the very
// same request, byte for byte, goes on to the last round without a request
// over the budget, and the journal keeps every message.
func TestContextKillDashNineSameRequest(t *testing.T) {
	for name, section := range policies {
		t.Run(name, func(t *testing.T) {
			rounds := *contextCrashRounds
			af := contextAgent(t, section, rounds)
			agentPath := filepath.Join(af.Dir, "agent.yaml")
			if err := os.WriteFile(agentPath, af.Source, 0o644); err != nil {
				t.Fatal(err)
			}
			job := childJob{Store: filepath.Join(t.TempDir(), "store"), Agent: agentPath, Cache: testCache,
				Out: filepath.Join(t.TempDir(), "request.json"), Cuts: 3}
			held := killChildAtRequest(t, job)

			store, err := OpenStore(job.Store)
			if err != nil {
				t.Fatal(err)
			}
			rec := &recorder{t: t, budget: budget}
			eng, _ := recordingEngine(t, rec, store)
			boundary := -1
			res, err := eng.Resume(context.Background(), ResumeOptions{ID: "victim", OnEvent: func(e Event) {
				if e.Type == EventCheckpointLoaded {
					boundary = e.Round
				}
			}})
			if err != nil || res.Rounds != rounds {
				t.Fatalf("resume: %+v, %v", res, err)
			}
			if !bytes.Equal(rec.first, held) {
				t.Fatalf("the first request after resume differs from the one the killed process sent:\nkilled:  %.600s\nresumed: %.600s", held, rec.first)
			}
			checkRecorded(t, rec, rounds-boundary, name, false)
			st := readState(t, store, "victim")
			if want := 1 + 2*rounds; len(st.Messages) != want {
				t.Errorf("the journal keeps %d messages, want %d", len(st.Messages), want)
			}
		})
	}
}

// killChildAtRequest runs job in a child process, waits until it holds
// the request it is to stop at, kills it with SIGKILL and returns the
// request's bytes.
func killChildAtRequest(t *testing.T, job childJob) []byte {
	t.Helper()
	b, _ := json.Marshal(job)
	cmd := exec.Command(os.Args[0], "-test.run=^TestContextChild$")
	cmd.Env = append(os.Environ(), childEnv+"="+string(b))
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	for {
		if held, err := os.ReadFile(job.Out); err == nil {
			if err := cmd.Process.Kill(); err != nil { // SIGKILL
				t.Fatal(err)
			}
			<-done
			return held
		}
		select {
		case err := <-done:
			t.Fatalf("the child ended before its request: %v\n%s", err, out.Bytes())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// TestContextChild is the child process of the kill -9 test; run any other
// way it does nothing.
func TestContextChild(t *testing.T) {
	var job childJob
	if err := json.Unmarshal([]byte(os.Getenv(childEnv)), &job); err != nil {
		t.Skip("the child of TestContextKillDashNineSameRequest")
	}
	store, err := OpenStore(job.Store)
	if err != nil {
		t.Fatal(err)
	}
	af, err := LoadAgentFile(job.Agent)
	if err != nil {
		t.Fatal(err)
	}
	eng, err := NewEngine(context.Background(), Config{CacheDir: job.Cache, Store: store})
	if err != nil {
		t.Fatal(err)
	}
	eng.wrapModel = func(p model.Provider) model.Provider { return &holder{Provider: p, job: job} }
	res, err := eng.Run(context.Background(), RunOptions{Agent: af, ID: "victim", Prompt: contextPrompt})
	t.Fatalf("the run ended before its request was held: %+v, %v", res, err)
}

// holder passes requests to the model until the first turn request after
// job.Cuts cuts; that one it writes to job.Out and holds until killed.
type holder struct {
	model.Provider
	job     childJob
	earlier int
	cuts    int
}

func (h *holder) Complete(ctx context.Context, req model.Request) (model.Response, error) {
	if req.Purpose == model.PurposeTurn && req.Earlier > h.earlier {
		h.earlier, h.cuts = req.Earlier, h.cuts+1
		if h.cuts == h.job.Cuts {
			tmp := h.job.Out + ".tmp"
			if err := os.WriteFile(tmp, requestBytes(nil, req), 0o644); err == nil {
				os.Rename(tmp, h.job.Out)
			}
			select {} // held until the kill
		}
	}
	return h.Provider.Complete(ctx, req)
}
