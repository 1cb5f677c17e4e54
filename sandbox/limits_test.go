package sandbox

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/cairnrun/cairn/abi"
)

func run(t *testing.T, p Policy) (Exit, string, string, error) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	ex, err := compile(t, "misbehave").Run(context.Background(), p, nil, &stdout, &stderr)
	return ex, stdout.String(), stderr.String(), err
}

func TestLimits(t *testing.T) {
	tests := []struct {
		name  string
		p     Policy
		check func(t *testing.T, ex Exit, out, errOut string, err error)
	}{
		{"infinite loop stops at its deadline", Policy{Args: []string{"spin"}, Timeout: 300 * time.Millisecond},
			func(t *testing.T, ex Exit, out, errOut string, err error) {
				if !errors.Is(err, ErrDeadline) {
					t.Fatalf("got %v, want ErrDeadline", err)
				}
			}},
		{"non-zero exit is reported, not an error", Policy{Args: []string{"exit"}},
			func(t *testing.T, ex Exit, out, errOut string, err error) {
				if err != nil || ex.Code != 7 || !strings.Contains(errOut, "giving up") {
					t.Fatalf("err %v, exit %d, stderr %q", err, ex.Code, errOut)
				}
			}},
		{"panic exits with status 2", Policy{Args: []string{"panic"}},
			func(t *testing.T, ex Exit, out, errOut string, err error) {
				if err != nil || ex.Code != 2 || !strings.Contains(errOut, "misbehave panics") {
					t.Fatalf("err %v, exit %d, stderr %q", err, ex.Code, errOut)
				}
			}},
		{"stdout flood is capped", Policy{Args: []string{"flood"}, StdoutLimit: 4096},
			func(t *testing.T, ex Exit, out, errOut string, err error) {
				if err != nil || !ex.StdoutTruncated || len(out) != 4096 {
					t.Fatalf("err %v, truncated %v, %d bytes", err, ex.StdoutTruncated, len(out))
				}
			}},
		{"deep recursion traps, the host survives", Policy{Args: []string{"recurse"}, MemoryLimit: 64 << 20},
			func(t *testing.T, ex Exit, out, errOut string, err error) {
				if err == nil && ex.Code == 0 {
					t.Fatalf("unbounded recursion ended well: %q", out)
				}
			}},
		{"environment is exactly the policy's", Policy{Args: []string{"env"}, Env: map[string]string{"ONLY": "this"}},
			func(t *testing.T, ex Exit, out, errOut string, err error) {
				if err != nil || strings.TrimSpace(out) != "ONLY=this" {
					t.Fatalf("err %v, environment %q", err, out)
				}
			}},
	}
	t.Setenv("CAIRN_HOST_SECRET", "do-not-leak")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ex, out, errOut, err := run(t, tt.p)
			tt.check(t, ex, out, errOut, err)
		})
	}
}

// A module that allocates without end is stopped at its memory limit and
// the call says so.
func TestMemoryBomb(t *testing.T) {
	_, err := compile(t, "misbehave").Call(context.Background(),
		Policy{Args: []string{"membomb"}, MemoryLimit: 64 << 20}, abi.Request{ABI: abi.Version})
	if !errors.Is(err, ErrMemoryLimit) {
		t.Fatalf("got %v, want ErrMemoryLimit", err)
	}
}

func TestCallFailures(t *testing.T) {
	m := compile(t, "misbehave")
	req := abi.Request{ABI: abi.Version, Tool: "x"}
	_, err := m.Call(context.Background(), Policy{Args: []string{"flood"}, StdoutLimit: 1000}, req)
	if !errors.Is(err, errBadResponse) || !strings.Contains(err.Error(), "cap") {
		t.Errorf("flood: got %v, want errBadResponse naming the cap", err)
	}
	_, err = m.Call(context.Background(), Policy{Args: []string{"env"}}, req)
	if !errors.Is(err, errBadResponse) {
		t.Errorf("text on stdout: got %v, want errBadResponse", err)
	}
	var exit *exitError
	_, err = m.Call(context.Background(), Policy{Args: []string{"exit"}}, req)
	if !errors.As(err, &exit) || exit.Code != 7 || !strings.Contains(err.Error(), "giving up") {
		t.Errorf("exit: got %v, want exitError 7 with the log's tail", err)
	}
}

func TestCompileRefusals(t *testing.T) {
	preamble := []byte{0x00, 'a', 's', 'm', 0x01, 0x00, 0x00, 0x00}
	// One func type, and an import of env.f of that type.
	importsEnv := append(append([]byte(nil), preamble...),
		0x01, 0x04, 0x01, 0x60, 0x00, 0x00,
		0x02, 0x09, 0x01, 0x03, 'e', 'n', 'v', 0x01, 'f', 0x00, 0x00)
	// Tables: 101 of one entry each; one of 2^21 entries (0x80 0x80 0x80 0x01).
	manyTables := []byte{0x65}
	for range 101 {
		manyTables = append(manyTables, 0x70, 0x00, 0x01)
	}
	manyTables = append(binary.AppendUvarint(append(append([]byte(nil), preamble...), 0x04), uint64(len(manyTables))), manyTables...)
	bigTable := append(append([]byte(nil), preamble...), 0x04, 0x07, 0x01, 0x70, 0x00, 0x80, 0x80, 0x80, 0x01)
	tests := []struct {
		name string
		wasm []byte
		want error
		msg  string
	}{
		{"not wasm", []byte("#!/bin/sh\n"), errInvalidModule, ""},
		{"truncated", guestBytes["misbehave"][:1000], errInvalidModule, ""},
		{"imports env.f", importsEnv, errImportDenied, "env.f"},
		{"101 tables", manyTables, ErrCompileLimit, "101 tables, past the limit of 100"},
		{"a table of 2^21 entries", bigTable, ErrCompileLimit, "2097152 entries, past the limit of 1048576"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := testRT.Compile(context.Background(), tt.wasm)
			if !errors.Is(err, tt.want) || !strings.Contains(err.Error(), tt.msg) {
				t.Fatalf("got %v, want %v saying %q", err, tt.want, tt.msg)
			}
		})
	}
}

// Cancelling the caller's context stops a call promptly.
func TestCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := compile(t, "misbehave").Run(ctx, Policy{Args: []string{"spin"}}, nil, nil, nil)
		done <- err
	}()
	time.Sleep(50 * time.Millisecond)
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
}

// TestSleepEndsAtTheDeadline: a guest granted the real clock that sleeps
// for an hour is stopped at its call's deadline, as a spinning one is:
// the host's sleep wakes when the call must stop. Before, wazero's sleep
// held the call for the whole hour, and this test until go test's
// timeout. Both a command (made at its call) and a reactor's call (a
// spare, bound to the call) are tried.
func TestSleepEndsAtTheDeadline(t *testing.T) {
	p := Policy{Args: []string{"sleep"}, RealClock: true, Timeout: 300 * time.Millisecond}
	if _, _, _, err := run(t, p); !errors.Is(err, ErrDeadline) {
		t.Fatalf("command: got %v, want ErrDeadline", err)
	}
	reactor, _ := preinitModules(t)
	p = Policy{Mounts: workspace(t), RealClock: true, Timeout: 300 * time.Millisecond}
	req := abi.Request{ABI: abi.Version, Tool: "probe", CallID: "c", Input: `{"sleep":"1h"}`, Workspace: abi.WorkspaceDir}
	for i := range 2 { // the first call's instance is made at it, the second's is a spare
		if _, err := reactor.Call(context.Background(), p, req); !errors.Is(err, ErrDeadline) {
			t.Fatalf("reactor call %d: got %v, want ErrDeadline", i, err)
		}
	}
}
