package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cairnrun/cairn/sandbox/overlay"
)

// Regression: fd_pread and fd_pwrite at an offset of 2^63 or more, which
// the host reads as negative, were EPERM, the errno of an escape: Go's
// ReadAt and WriteAt refuse a negative offset with an error that carries
// no errno. They are EINVAL (28), as pread(2) and pwrite(2) say, on a
// plain mount and on an overlay, appending or not.
func TestNegativeOffsetIsEINVAL(t *testing.T) {
	for _, kind := range mountKinds {
		t.Run(kind, func(t *testing.T) {
			_, got := escapeRun(t, guestBytes["rawwasi"], kind)
			for _, name := range []string{"pread-negative", "pwrite-negative", "pwrite-negative-append"} {
				if got[name] != "28" {
					t.Errorf("%s: errno %q, want 28 (EINVAL)", name, got[name])
				}
			}
		})
	}
}

// Regression: poll_oneoff answers each subscription to a descriptor in
// the host, where no stop check runs: 8 million of them (384 MB of the
// guest's memory) kept a call going for seconds after it had to stop, at
// its deadline or when cancelled (15 million, 13 s past a deadline of
// 8 s). wazero's, which answered a poll of clocks alone, was slower still
// (10 million clocks, seconds; 80 million, which a memory of 4 GiB holds,
// 42 s). It now stops when the call must, and the call with it.
func TestPollOfManySubscriptionsStopsWithTheCall(t *testing.T) {
	m := compile(t, "rawwasi")
	for _, c := range []struct{ mode, n string }{{"poll", "8000000"}, {"pollclocks", "10000000"}} {
		t.Run(c.mode, func(t *testing.T) {
			p := Policy{Args: []string{c.mode, "1"}, MemoryLimit: 512 << 20}
			var out bytes.Buffer
			if _, err := m.Run(context.Background(), p, nil, &out, &out); err != nil {
				t.Fatalf("a poll of one subscription: %v: %s", err, out.String())
			}
			// The call is cancelled 100 ms after the guest says it calls
			// poll_oneoff, which then holds millions of subscriptions.
			p.Args[1] = c.n
			stdout, err, cancelled := runCancelledOnceBusy(t, m, p)
			if !cancelled {
				if strings.HasPrefix(stdout, "poll 0 ") {
					t.Logf("the poll ended before the call was cancelled: %s", stdout)
					return
				}
				t.Fatalf("the guest did not reach poll_oneoff: %v: %q", err, stdout)
			}
		})
	}
}

// Regression: wazero's random_get fills the guest's buffer from the
// instance's source of randomness in one read, in the host, where no stop
// check runs: 600 MB of it kept a call going for seconds after it was
// cancelled (400 MB, 1.9 s past a deadline of 1 s, or 2.8 s with the real
// randomness). The source now gives at most 1 MiB a read and fails once
// the call must stop, and random_get with it (EIO).
func TestRandomGetOfHugeBufferStopsWithTheCall(t *testing.T) {
	for _, real := range []bool{false, true} {
		t.Run(map[bool]string{false: "deterministic", true: "real"}[real], func(t *testing.T) {
			p := Policy{Args: []string{"random", "600000000"}, MemoryLimit: 1 << 30, RealRandom: real}
			if stdout, err, cancelled := runCancelledOnceBusy(t, compile(t, "rawwasi"), p); !cancelled {
				t.Fatalf("the guest did not reach random_get, or the call ended before it was cancelled: %v: %q", err, stdout)
			}
		})
	}
}

// Regression: wazero's fd_write writes each of its iovecs with a write
// of its own to stdout, in the host, where no stop check runs: 400 million
// empty iovecs (3.2 GB of the guest's memory, which may be 4 GiB) kept a
// call going for 31 s after it was cancelled, 100 million for seconds.
// stdout and stderr now take no more writes once the call must stop
// (EIO).
func TestWriteOfManyIovecsToStdoutStopsWithTheCall(t *testing.T) {
	p := Policy{Args: []string{"writev", "-", "100000000"}, MemoryLimit: 1 << 30}
	if stdout, err, cancelled := runCancelledOnceBusy(t, compile(t, "rawwasi"), p); !cancelled {
		t.Fatalf("the guest did not reach fd_write, or the call ended before it was cancelled: %v: %q", err, stdout)
	}
}

// runCancelledOnceBusy runs m under p and cancels the call 100 ms after
// the guest first writes to stderr, which it does as it starts the host
// call under test. It reports whether the call was cancelled, and if so
// fails t unless the call ended with context.Canceled within a second. A
// call that ended well as it was cancelled (within a tenth of the second:
// its host call done just then, on a busy machine) was not.
func runCancelledOnceBusy(t *testing.T, m *Module, p Policy) (stdout string, err error, cancelled bool) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out bytes.Buffer
	var once sync.Once
	var stopped atomic.Pointer[time.Time]
	stderr := writerFunc(func(b []byte) (int, error) {
		once.Do(func() {
			time.AfterFunc(100*time.Millisecond, func() {
				now := time.Now()
				stopped.Store(&now)
				cancel()
			})
		})
		return len(b), nil
	})
	_, err = m.Run(ctx, p, nil, &out, stderr)
	if stopped.Load() == nil {
		return out.String(), err, false
	}
	late := time.Since(*stopped.Load())
	t.Logf("the call ended %s after it was cancelled: %v; %s", late, err, out.String())
	if err == nil && late < 100*time.Millisecond {
		return out.String(), err, false
	}
	if !errors.Is(err, context.Canceled) {
		t.Errorf("the call ended with %v, want context.Canceled", err)
	}
	if late > time.Second {
		t.Errorf("the call ended %s after it was cancelled", late)
	}
	return out.String(), err, true
}

// A poll of clocks alone still waits for the shortest, with the real
// clock, and reports every clock as come.
func TestPollOfClocksWaitsForTheShortest(t *testing.T) {
	var stdout bytes.Buffer
	p := Policy{Args: []string{"wait", "3"}, RealClock: true}
	start := time.Now()
	_, err := compile(t, "rawwasi").Run(context.Background(), p, nil, &stdout, io.Discard)
	if took := time.Since(start); err != nil || stdout.String() != "poll 0 3\n" || took < 200*time.Millisecond {
		t.Errorf("a poll of three clocks of 200 ms: %v, %q after %s; want \"poll 0 3\" after 200 ms", err, stdout.String(), took)
	}
}

// writerFunc is an io.Writer that is a function.
type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(b []byte) (int, error) { return f(b) }

// rawWASIWant is what testdata/rawwasi prints, the same on a plain mount
// and an overlay but where rawWASIOverlay says otherwise. Errnos: 0
// success, 2 EACCES, 8 EBADF, 21 EFAULT, 28 EINVAL, 31 EISDIR,
// 37 ENAMETOOLONG, 54 ENOTDIR, 58 ENOTSUP, 63 EPERM, 69 EROFS,
// 76 ENOTCAPABLE.
var rawWASIWant = map[string]string{
	"open-inside": "0", "pread-negative": "28", "seek-negative": "28",
	"open-made": "0", "pwrite-negative": "28", "pwrite-max": "28", "setsize-negative": "28",
	"allocate-overflow": "28", "open-append": "0", "pwrite-negative-append": "28",
	// Pointers past the end of memory, or wrapping past 2^32.
	"fdstat-past-end": "21", "fdstat-wrap": "21", "prestat-name-past-end": "21", "prestat-name-wrap": "21",
	"open-result-past-end": "21", "open-path-past-end": "21", "open-path-wrap": "21",
	"open-../outside.txt": "63", "open-/etc/passwd": "63", "open-sub/../../outside.txt": "63", "open-.": "0",
	// The read-only mount: no open to change it, and a file opened to
	// read gains no right to write, by flags, rights or renumbering.
	"ro-preopen-rights": "0 0 0 true 76", "ro-subdir-rights": "0 0 0 0 true 69",
	"rw-preopen-rights": "0 true true",
	"ro-append":         "69", "ro-trunc": "69", "ro-create": "69", "ro-write": "0 0 76 76",
	"ro-renumber-rw-onto": "0 0 8",
	"apply-temp":          "0", // a plain mount has no Apply
	// wazero answers fd_prestat_get of stdio with an empty name.
	"prestat-stdio": "0 0", "renumber-stdio-self": "0", "renumber-preopen-self": "0",
	"renumber-preopen-onto-file": "58",
	// stderr moved onto a file: the file's number writes, 2 is closed
	// (EBADF to fd_fdstat_get, fd_renumber and poll_oneoff); closing the
	// number closes stderr.
	"renumber-stdio-onto-file": "0 0 8 8 0 1 8 0 8 8",
	// A record of rights follows its descriptor: renumbered, narrowed,
	// onto stdin, onto a preopen, and a directory's to what it opens.
	"renumber-ro-onto-rw":      "0 76 8",
	"narrow-then-renumber":     "0 76 0 76 76",
	"renumber-onto-stdin":      "0 inside 0 76 8",
	"renumber-onto-ro-preopen": "0 8 54 76",
	"narrowed-dir-renumbered":  "0 0 0 76 0 76",
	"narrowed-dir-dotdot":      "63",
	// Rights a descriptor lacks: ENOTCAPABLE, and EBADF to allocate a
	// directory (never open for writing); a buffer too small for a
	// preopen's name, ENAMETOOLONG.
	"read-only-rights": "76 76 0 76", "allocate-dir": "8", "prestat-name-short": "37",
	"preopen-narrowed": "0 76 58",
	// A closed preopen opens nothing, and the file that takes its
	// number is no preopen and has the rights it was opened with.
	"close-preopen": "0 8 8 0 3 8 false",
	"poll-overlap":  "0 3 1:2:0 2:2:0 3:2:8", "poll-events-past-end": "21", "poll-nevents-past-end": "21",
	"poll-in-past-end": "21", "poll-wrap": "21", "poll-huge": "21",
}

// rawWASIOverlay is where an overlay answers otherwise.
var rawWASIOverlay = map[string]string{
	"apply-temp": "2", // a name Apply's temporary files have is refused
}

// A guest calling WASI's functions with descriptors no file is at (-1,
// 2^30, 2^31-1), offsets the host reads as negative, pointers past the end
// of memory, renumberings onto stdio, preopens and narrowed descriptors,
// and rights asked back, gets an errno for each, no right it lacked and
// nothing outside its mounts.
func TestEscapeDescriptorAbuse(t *testing.T) {
	for _, kind := range mountKinds {
		t.Run(kind, func(t *testing.T) {
			_, got := escapeRun(t, guestBytes["rawwasi"], kind)
			want := maps.Clone(rawWASIWant)
			for _, fd := range []string{"-1", "-2", "1073741824", "2147483647"} {
				want["fdstat-"+fd] = "8 0"
				for _, op := range []string{"setrights", "renumber-from", "renumber-to", "close", "prestat", "read"} {
					want[op+"-"+fd] = "8"
				}
			}
			if kind == "overlay" {
				maps.Copy(want, rawWASIOverlay)
			}
			for _, name := range slices.Sorted(maps.Keys(want)) {
				if got[name] != want[name] {
					t.Errorf("%s: got %q, want %q", name, got[name], want[name])
				}
			}
			for name := range got {
				if _, ok := want[name]; !ok {
					t.Errorf("%s: %q, an attempt the test does not know", name, got[name])
				}
			}
		})
	}
}

// Regression: wazero's fd_write writes each of its iovecs with a call of
// the file's Write, in the host, where no stop check runs; to a workspace
// file each is a system call (two on an overlay). 3 million iovecs of
// one byte (24 MB of the guest's memory) held a call with a deadline of
// 1 s for 23 s on a plain mount and 31 s on an overlay. A workspace file
// now fails its reads and writes (EINTR) once the call must stop, and the
// call ends at its deadline.
func TestWriteOfManyIovecsEndsAtTheDeadline(t *testing.T) {
	const timeout = time.Second
	for _, kind := range mountKinds {
		t.Run(kind, func(t *testing.T) {
			ws := t.TempDir()
			mt := Mount{HostPath: ws, GuestPath: "/work"}
			if kind == "overlay" {
				ov, _ := newOverlay(t, ws)
				mt = Mount{GuestPath: "/work", Overlay: ov}
			}
			p := Policy{Args: []string{"writev", "f", "3000000"}, Mounts: []Mount{mt}, Timeout: timeout}
			var stdout bytes.Buffer
			stderr := &stamped{}
			_, err := compile(t, "rawwasi").Run(context.Background(), p, nil, &stdout, stderr)
			if stderr.at.IsZero() {
				t.Fatalf("the guest did not reach fd_write before its deadline: %v: %q", err, stdout.String())
			}
			late := time.Since(stderr.at)
			t.Logf("the call ended %s after the guest called fd_write: %v; %s", late, err, stdout.String())
			if !errors.Is(err, ErrDeadline) {
				t.Errorf("the call ended with %v, want ErrDeadline", err)
			}
			if late > timeout+time.Second {
				t.Errorf("the call ended %s after the guest called fd_write, with a deadline of %s", late, timeout)
			}
		})
	}
}

// stamped notes when it is first written to.
type stamped struct {
	mu sync.Mutex
	at time.Time
}

func (s *stamped) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.at.IsZero() {
		s.at = time.Now()
	}
	return len(p), nil
}

// Regression: path_open with O_TRUNC and the rights of a file only read
// emptied the file on an overlay, but on a plain mount failed (EINVAL)
// and left it whole, and on an overlay failed so too for a file the call
// had written. It empties the file and opens it to read on both, as
// Linux's open(2) and wazero's own directory mounts do (and WASI asks only
// PATH_FILESTAT_SET_SIZE of the directory); the file does not write.
func TestReadOnlyTruncateIsTheSameOnEveryMount(t *testing.T) {
	for _, kind := range mountKinds {
		t.Run(kind, func(t *testing.T) {
			ws := t.TempDir()
			must(t, os.WriteFile(filepath.Join(ws, "lower.txt"), []byte("lower content"), 0o644))
			mt := Mount{HostPath: ws, GuestPath: "/work"}
			var ov *overlay.Overlay
			var staging string
			if kind == "overlay" {
				ov, staging = newOverlay(t, ws)
				mt = Mount{GuestPath: "/work", Overlay: ov}
			}
			var stdout, stderr bytes.Buffer
			p := Policy{Args: []string{"rdtrunc"}, Mounts: []Mount{mt}}
			if _, err := compile(t, "rawwasi").Run(context.Background(), p, nil, &stdout, &stderr); err != nil {
				t.Fatalf("run: %v: %s", err, stderr.String())
			}
			got := results(stdout.String())
			for _, name := range []string{"rdtrunc-lower.txt", "rdtrunc-made.txt"} {
				if got[name] != "0 0 0 76" {
					t.Errorf("%s: got %q, want \"0 0 0 76\" (opened, empty, read, no write: ENOTCAPABLE)", name, got[name])
				}
			}
			if ov != nil {
				effects, err := ov.Effects()
				must(t, err)
				must(t, overlay.Apply(ws, staging, effects))
			}
			for _, name := range []string{"lower.txt", "made.txt"} {
				if b, err := os.ReadFile(filepath.Join(ws, name)); err != nil || len(b) != 0 {
					t.Errorf("%s after the call: %q, %v; want it empty", name, b, err)
				}
			}
		})
	}
}

// Regression: a read-only preopen reported, in fd_fdstat_get, every right
// a read-write one has: to create, write, rename and remove, and to pass
// the right to write on to what it opens, none of which it allows. It
// reports only the rights to read, and fd_fdstat_set_rights asking one
// back is ENOTCAPABLE; the read-write preopen still reports them all.
// And a directory it opened reported, and passed on, every right to
// change what is in it (path_create_file, path_rename_*, path_unlink_file,
// …): it reports only those the preopen passes on, and its mount still
// refuses a change (EROFS).
func TestReadOnlyPreopenReportsNoRightToChange(t *testing.T) {
	for _, kind := range mountKinds {
		t.Run(kind, func(t *testing.T) {
			_, got := escapeRun(t, guestBytes["rawwasi"], kind)
			for _, name := range []string{"ro-preopen-rights", "ro-subdir-rights", "rw-preopen-rights"} {
				if got[name] != rawWASIWant[name] {
					t.Errorf("%s: got %q, want %q", name, got[name], rawWASIWant[name])
				}
			}
		})
	}
}

// Regression: poll_oneoff with its events over the subscriptions not yet
// read copied all of them first, into host memory outside the guest's
// limit: as much as the guest's memory holds (a guest of 4 GiB could have
// the host take 4 GiB more, at every call). It answers them in an order
// that reads each before any event overwrites it, keeping one of them
// aside, and every event is as it would be with the two apart.
func TestPollOverItsSubscriptionsCopiesNone(t *testing.T) {
	const n = 600_000
	m := compile(t, "rawwasi")
	run := func(d int) uint64 {
		p := Policy{Args: []string{"pollover", strconv.Itoa(n), strconv.Itoa(d)}, MemoryLimit: 512 << 20}
		var stdout, stderr bytes.Buffer
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		if _, err := m.Run(context.Background(), p, nil, &stdout, &stderr); err != nil {
			t.Fatalf("events %d bytes past the subscriptions: %v: %s", d, err, stderr.String())
		}
		runtime.ReadMemStats(&after)
		want := fmt.Sprintf("0 %d 0", n-n/3)
		if got := results(stdout.String())["pollover"]; got != want {
			t.Errorf("events %d bytes past the subscriptions: got %q, want %q (errno, events, events not as expected)", d, got, want)
		}
		return after.TotalAlloc - before.TotalAlloc
	}
	// What a call costs the host with the events apart from the
	// subscriptions (the first call also compiles).
	run(48*n + 100)
	apart := run(48*n + 100)
	for _, d := range []int{0, 16, 32, 48, 50, 48 * 7, 48 * n / 3, 48*n/2 + 8, 48*n - 40, 48 * n} {
		if alloc := run(d); alloc > apart+48*n/4 {
			t.Errorf("events %d bytes past the subscriptions: the host allocated %d bytes, %d with them apart", d, alloc, apart)
		}
	}
}

// Regression: fd_renumber of stdio onto a file was ENOTSUP, as wazero
// keeps stdio where it is, and the WASI testsuite's rust/stdio failed. The
// file's number now names the stdio, which writes through it; the number
// it left is closed (EBADF), to fd_renumber and poll_oneoff too; closing
// the file's number closes the stdio.
func TestStdioRenumberedOntoAFile(t *testing.T) {
	for _, kind := range mountKinds {
		t.Run(kind, func(t *testing.T) {
			_, got := escapeRun(t, guestBytes["rawwasi"], kind)
			if want := rawWASIWant["renumber-stdio-onto-file"]; got["renumber-stdio-onto-file"] != want {
				t.Errorf("got %q, want %q", got["renumber-stdio-onto-file"], want)
			}
		})
	}
}

// Regression: fd_seek and fd_tell of stdin, stdout and stderr answered
// ENOSYS (52), as if the host had no fd_seek, and fd_pread and fd_pwrite
// of them so too. None of them is a file one can seek in: each is ESPIPE
// (70), as lseek(2), pread(2) and pwrite(2) say of a pipe, and as WASI
// hosts on Linux answer.
func TestSeekOfStdioIsESPIPE(t *testing.T) {
	var stdout, stderr bytes.Buffer
	p := Policy{Args: []string{"stdioseek"}}
	if _, err := compile(t, "rawwasi").Run(context.Background(), p, strings.NewReader("in"), &stdout, &stderr); err != nil {
		t.Fatalf("run: %v: %s", err, stderr.String())
	}
	got := results(stdout.String())
	for name, want := range map[string]string{
		"stdioseek-0":      "70 70 70 70",
		"stdioseek-1":      "70 70 70 70",
		"stdioseek-2":      "70 70 70 70",
		"stdioseek-pread":  "70",
		"stdioseek-pwrite": "70 70",
	} {
		if got[name] != want {
			t.Errorf("%s: errnos %q, want %q (ESPIPE)", name, got[name], want)
		}
	}
}
