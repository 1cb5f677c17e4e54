package sandbox

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"
)

// runWat runs a module of testdata/wat under p.
func runWat(t *testing.T, name string, p Policy) (Exit, string, error) {
	t.Helper()
	var stdout bytes.Buffer
	ex, err := testRT.Exec(context.Background(), watBytes[name], p, nil, &stdout, io.Discard)
	return ex, stdout.String(), err
}

// Hand-written guests that attack the host's resources rather than its
// files: each is stopped, and the host carries on.
func TestRawLimits(t *testing.T) {
	tests := []struct {
		name, guest string
		p           Policy
		check       func(t *testing.T, ex Exit, out string, err error)
	}{
		{"infinite loop stops at its deadline", "spin", Policy{Timeout: 100 * time.Millisecond},
			func(t *testing.T, ex Exit, out string, err error) {
				if !errors.Is(err, ErrDeadline) {
					t.Fatalf("got %v, want ErrDeadline", err)
				}
			}},
		{"recursion that never overflows stops at its deadline", "fanout", Policy{Timeout: 100 * time.Millisecond},
			func(t *testing.T, ex Exit, out string, err error) {
				if !errors.Is(err, ErrDeadline) {
					t.Fatalf("got %v, want ErrDeadline", err)
				}
			}},
		{"recursion whose calls each run into a loop stops at its deadline", "fanloop", Policy{Timeout: 100 * time.Millisecond},
			func(t *testing.T, ex Exit, out string, err error) {
				if !errors.Is(err, ErrDeadline) {
					t.Fatalf("got %v, want ErrDeadline", err)
				}
			}},
		{"a start function that loops stops at its deadline", "start", Policy{Args: []string{"loop"}, Timeout: 100 * time.Millisecond},
			func(t *testing.T, ex Exit, out string, err error) {
				if !errors.Is(err, ErrDeadline) {
					t.Fatalf("got %v, want ErrDeadline", err)
				}
			}},
		{"a start function runs before _start", "start", Policy{},
			func(t *testing.T, ex Exit, out string, err error) {
				if err != nil || ex.Code != 7 {
					t.Fatalf("err %v, exit %d: want exit 7, stored by the start function", err, ex.Code)
				}
			}},
		{"memory bomb ends at the limit", "grow", Policy{MemoryLimit: 8 << 20},
			func(t *testing.T, ex Exit, out string, err error) {
				if err != nil || strings.TrimSpace(out) != "128" {
					t.Fatalf("err %v, pages %q, want 128 (8 MiB)", err, out)
				}
			}},
		{"a table without a maximum grows only within the table limit", "tablegrow", Policy{},
			func(t *testing.T, ex Exit, out string, err error) {
				if err != nil || out != "refused\ngrew\n65537\n" {
					t.Fatalf("err %v, out %q: want the 2^31 grow refused, the 2^16 one done", err, out)
				}
			}},
		{"a panic in a WASI function is a trap that names no host file", "hostpanic", Policy{},
			func(t *testing.T, ex Exit, out string, err error) {
				if !errors.Is(err, errTrap) || !strings.Contains(err.Error(), "poll_oneoff") ||
					strings.Contains(err.Error(), ".go:") || strings.Contains(err.Error(), "goroutine") {
					t.Fatalf("got %v, want errTrap naming poll_oneoff and no Go stack", err)
				}
			}},
		{"deep recursion traps at wazero's stack ceiling", "recurse", Policy{},
			func(t *testing.T, ex Exit, out string, err error) {
				if !errors.Is(err, errTrap) || !strings.Contains(err.Error(), "stack overflow") {
					t.Fatalf("got %v, want errTrap for a stack overflow", err)
				}
			}},
		{"stdout flood is capped and says so", "flood", Policy{StdoutLimit: 1 << 20},
			func(t *testing.T, ex Exit, out string, err error) {
				if err != nil || !ex.StdoutTruncated || len(out) != 1<<20 {
					t.Fatalf("err %v, truncated %v, %d bytes", err, ex.StdoutTruncated, len(out))
				}
			}},
		{"sockets are not imported by default", "sock", Policy{},
			func(t *testing.T, ex Exit, out string, err error) {
				if !errors.Is(err, errImportDenied) || !strings.Contains(err.Error(), "sock_accept") {
					t.Fatalf("got %v, want errImportDenied naming sock_accept", err)
				}
			}},
		{"granted, a socket import finds no socket", "sock", Policy{Imports: []string{"sock_accept", "proc_exit"}},
			func(t *testing.T, ex Exit, out string, err error) {
				if err != nil || ex.Code == 0 {
					t.Fatalf("err %v, exit %d: want the errno of a failed accept", err, ex.Code)
				}
			}},
		{"an import list without fd_write refuses a module that writes", "flood", Policy{Imports: []string{"proc_exit"}},
			func(t *testing.T, ex Exit, out string, err error) {
				if !errors.Is(err, errImportDenied) || !strings.Contains(err.Error(), "fd_write") {
					t.Fatalf("got %v, want errImportDenied naming fd_write", err)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ex, out, err := runWat(t, tt.guest, tt.p)
			tt.check(t, ex, out, err)
		})
	}
}

// A module importing a function WASI preview 1 does not have is refused
// at compile, naming it.
func TestCompileRefusesUnknownWASIImport(t *testing.T) {
	preamble := []byte{0x00, 'a', 's', 'm', 0x01, 0x00, 0x00, 0x00}
	mod := "wasi_snapshot_preview1"
	imp := append([]byte{0x01, byte(len(mod))}, mod...)
	imp = append(append(imp, 0x07), "get_cwd"...)
	imp = append(imp, 0x00, 0x00)
	wasm := append(append(append([]byte(nil), preamble...), 0x01, 0x04, 0x01, 0x60, 0x00, 0x00, 0x02, byte(len(imp))), imp...)
	_, err := testRT.Compile(context.Background(), wasm)
	if !errors.Is(err, errImportDenied) || !strings.Contains(err.Error(), "get_cwd") {
		t.Fatalf("got %v, want errImportDenied naming get_cwd", err)
	}
}

// A guest waiting on a stdin that never sends is stopped at its deadline:
// the read is given up on, not waited out.
func TestDeadlineHoldsWhileReadingStdin(t *testing.T) {
	r, w := io.Pipe()
	defer w.Close()
	var out bytes.Buffer
	_, err := compile(t, "misbehave").Run(context.Background(),
		Policy{Args: []string{"stdin"}, Timeout: 200 * time.Millisecond}, r, &out, &out)
	if !errors.Is(err, ErrDeadline) {
		t.Fatalf("got %v (%s), want ErrDeadline", err, out.String())
	}
}

// A guest that holds many files open is stopped at the policy's budget,
// and the descriptors are returned when it ends.
func TestOpenFileBudget(t *testing.T) {
	f := newFixture(t, false)
	var out bytes.Buffer
	_, err := testRT.Exec(context.Background(), watBytes["hostile"],
		Policy{Mounts: f.mounts(), MaxOpenFiles: 10}, nil, &out, io.Discard)
	must(t, err)
	if got := results(out.String())["fd-exhaust"]; got != "33 10" {
		t.Fatalf("fd-exhaust %q, want EMFILE after 10 (the mounts' roots, unused, hold none)", got)
	}
}
