package main

import (
	"strings"
	"testing"
)

// Regression: `cairn run --id A --fresh PROMPT` of an agent that exists,
// without -f, said the agent does not exist. It says the agent exists,
// that --fresh starts it over from an agent file, and the two commands
// to go on with; it exits 2 and changes nothing. Of an agent that does
// not exist, it says so, as before.
func TestRunFreshWithoutAgentFileOfAnExistingAgent(t *testing.T) {
	store := t.TempDir()
	if code, _, errOut := cairn(t, "run", "--store", store, "--cache", cacheForTests(t), "--id", "a2", "-f", crashAgent(t)); code != exitDone {
		t.Fatalf("run: exit %d\n%s", code, errOut)
	}
	_, before, _ := cairn(t, "show", "--store", store, "a2")
	code, _, errOut := cairn(t, "run", "--store", store, "--id", "a2", "--fresh", "hi")
	want := `cairn: agent "a2" exists, and --fresh starts it over from an agent file, forgetting its conversation: ` +
		"give the file (cairn run -f AGENT_FILE --id a2 --fresh [PROMPT]), or leave out --fresh to go on with the agent as it is (cairn run --id a2 PROMPT)\n"
	if code != exitUsage || errOut != want {
		t.Fatalf("run --fresh without -f: exit %d, %q\nwant exit %d, %q", code, errOut, exitUsage, want)
	}
	if _, after, _ := cairn(t, "show", "--store", store, "a2"); after != before {
		t.Fatalf("the refused run changed the agent:\n%s\nwas\n%s", after, before)
	}
	code, _, errOut = cairn(t, "run", "--store", store, "--id", "nobody", "--fresh", "hi")
	if code != exitUsage || !strings.Contains(errOut, `agent "nobody" does not exist: give its agent file to make it`) {
		t.Fatalf("run --fresh of an agent that does not exist: exit %d, %q", code, errOut)
	}
}
