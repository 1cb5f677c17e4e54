package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/cairnrun/cairn/internal/pgtest"
)

// A real cairn process is killed with SIGKILL after it has stored a new
// agent and before it has journaled the run's start and first prompt:
// while it keeps the agent's workspace as its first past, which it does
// between the two, held up by this test's lock of the table it writes
// that past to (a PostgreSQL store's cairn_past; the run's MCP servers,
// which it once started between the two, start before the agent is
// stored). The prompt, given on the command line or by the agent file, is
// kept with the agent as it is made: the resume goes on with it, and the
// model is sent what a run never killed sends, byte for byte, and `cairn
// log` shows the conversation that run has. An agent stored without a
// prompt (none was given, as with every agent an older cairn made)
// resumes as before: it has nothing to ask the model and says how to give
// it a prompt. Until the resume, a new prompt is refused, which would pass
// over the one the agent was made with.
func TestKillBeforeTheFirstPromptIsJournaledLosesNoPrompt(t *testing.T) {
	bin, cache := cairnBinary(t), cacheForTests(t)
	m := newWireModel(t)
	const prompt = "Read the notes, step by step."
	for _, c := range []struct {
		name, filePrompt string
		args             []string
	}{
		{name: "command line", args: []string{prompt}},
		{name: "agent file", filePrompt: prompt},
		{name: "none"},
	} {
		t.Run(c.name, func(t *testing.T) {
			run := func(path string, hold bool) (store string) {
				dir := promptAgent(t, m, path, c.filePrompt)
				store = pgtest.Shared(t).NewDatabase(t)
				args := append([]string{"run", "--store", store, "--cache", cache, "--json", "--id", "victim",
					"-f", filepath.Join(dir, "agent.yaml")}, c.args...)
				cmd := exec.Command(bin, args...)
				var out bytes.Buffer
				cmd.Stdout, cmd.Stderr = &out, &out
				if !hold {
					if err := cmd.Run(); err != nil && c.filePrompt+strings.Join(c.args, "") != "" {
						t.Fatalf("uninterrupted run: %v\n%s", err, out.Bytes())
					}
					return store
				}
				release := holdPasts(t, bin, store)
				must(t, cmd.Start())
				waitForPastWrite(t, cmd, store)
				must(t, cmd.Process.Signal(syscall.SIGKILL))
				cmd.Wait()
				release()
				if bytes.Contains(out.Bytes(), []byte(`"type":"run_start"`)) {
					t.Fatalf("the run started before it kept its first past:\n%s", out.Bytes())
				}
				return store
			}
			wholePath, trialPath := c.name[:4]+"-whole", c.name[:4]+"-trial"
			wholeStore := run(wholePath, false)
			whole := m.sent(wholePath)
			store := run(trialPath, true)
			if n := len(m.sent(trialPath)); n != 0 {
				t.Fatalf("the killed run sent the model %d requests before it kept its first past", n)
			}
			if c.name != "none" {
				// A new prompt would pass over the one the agent was made
				// with: it is refused until a resume has given that one.
				out, err := exec.Command(bin, "run", "--store", store, "--cache", cache, "--id", "victim", "something else").CombinedOutput()
				if err == nil || !bytes.Contains(out, []byte("resume it first (`cairn resume victim`) to go on with that prompt")) {
					t.Fatalf("a new prompt before the resume: %v, want it refused with the resume's advice:\n%s", err, out)
				}
				// So is serving it over MCP, whose client's prompts would
				// start a run without the one the agent was made with.
				mcp := exec.Command(bin, "mcp", "--store", store, "--cache", cache, "--id", "victim")
				mcp.Stdin = strings.NewReader("")
				out, err = mcp.CombinedOutput()
				if err == nil || !bytes.Contains(out, []byte("resume it first (`cairn resume victim`) to go on with that prompt, then serve it")) {
					t.Fatalf("cairn mcp --id before the resume: %v, want it refused with the resume's advice:\n%s", err, out)
				}
			}
			res := exec.Command(bin, "resume", "--store", store, "--cache", cache, "victim")
			out, err := res.CombinedOutput()
			resumed := m.sent(trialPath)
			if c.name == "none" {
				if code := res.ProcessState.ExitCode(); code != exitPaused || !bytes.Contains(out, []byte("the agent has no conversation yet; give it a prompt with `cairn run --id victim PROMPT`")) {
					t.Fatalf("resume of an agent stored without a prompt: exit %d, want %d and the advice to give one:\n%s", code, exitPaused, out)
				}
				if len(resumed) != 0 {
					t.Fatalf("resume of an agent stored without a prompt sent the model %d requests", len(resumed))
				}
				return
			}
			if err != nil {
				t.Fatalf("resume: %v\n%s", err, out)
			}
			if len(whole) < 2 || len(resumed) != len(whole) {
				t.Fatalf("the resumed run sent %d requests, the run never killed %d:\n%s", len(resumed), len(whole), out)
			}
			for i := range whole {
				if !bytes.Equal(resumed[i], whole[i]) {
					t.Fatalf("request %d differs from the run never killed's:\nresumed: %s\nnever killed: %s", i+1, resumed[i], whole[i])
				}
			}
			if got, want := agentLog(t, bin, store), agentLog(t, bin, wholeStore); !bytes.Equal(got, want) {
				t.Fatalf("cairn log after the resume:\n%s\nwant, as the run never killed has it:\n%s", got, want)
			}
		})
	}
}

// promptAgent writes, in a new directory it returns, an agent whose model
// is m under path, with prompt in its agent file unless it is "".
func promptAgent(t *testing.T, m *wireModel, path, prompt string) string {
	t.Helper()
	dir := t.TempDir()
	must(t, os.Mkdir(filepath.Join(dir, "ws"), 0o755))
	must(t, os.WriteFile(filepath.Join(dir, "ws", "notes.txt"), []byte("a line of the notes the agent reads again\n"), 0o644))
	file := fmt.Sprintf(`name: gated
model: {provider: openai, name: m, base_url: %s/%s/v1, max_retries: -1}
system: You read the notes again and again.
workspace: ws
tools: [{module: builtin, only: [read_file]}]
limits: {max_rounds: %d}
`, m.URL, path, ctxRounds+5)
	if prompt != "" {
		file += "prompt: " + prompt + "\n"
	}
	must(t, os.WriteFile(filepath.Join(dir, "agent.yaml"), []byte(file), 0o644))
	return dir
}

// holdPasts makes the tables of the database url (a cairn command that
// reads it) and locks cairn_past against writes, in a transaction of its
// own, until release: a run that keeps a past waits for it.
func holdPasts(t *testing.T, bin, url string) (release func()) {
	t.Helper()
	if out, err := exec.Command(bin, "ls", "--store", url).CombinedOutput(); err != nil {
		t.Fatalf("cairn ls: %v\n%s", err, out)
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	must(t, err)
	tx, err := conn.Begin(ctx)
	must(t, err)
	_, err = tx.Exec(ctx, `LOCK TABLE cairn_past IN EXCLUSIVE MODE`)
	must(t, err)
	return func() {
		// A write that waits for the lock is ended with its process,
		// not done once the lock is let go.
		_, err := tx.Exec(ctx, `SELECT pg_terminate_backend(l.pid) FROM pg_locks l JOIN pg_class c ON c.oid = l.relation
			WHERE c.relname = 'cairn_past' AND NOT l.granted`)
		must(t, err)
		tx.Rollback(ctx)
		conn.Close(ctx)
	}
}

// waitForPastWrite waits, a minute at most, for a write of cmd's to
// cairn_past of the database url to wait for a lock (holdPasts).
func waitForPastWrite(t *testing.T, cmd *exec.Cmd, url string) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	must(t, err)
	defer conn.Close(ctx)
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(5 * time.Millisecond) {
		var n int
		must(t, conn.QueryRow(ctx, `SELECT count(*) FROM pg_locks l JOIN pg_class c ON c.oid = l.relation
			WHERE c.relname = 'cairn_past' AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
			AND NOT l.granted`).Scan(&n))
		if n > 0 {
			return
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatal("the run wrote no past within a minute")
		}
	}
}
