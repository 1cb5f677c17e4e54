// Command preinit is a fast-mode guest for the snapshot tests: its one tool
// reports what a call sees, and changes what a later call could see if
// calls shared state.
package main

import (
	crand "crypto/rand"
	"encoding/hex"
	"encoding/json"
	"math/rand/v2"
	"os"
	"strings"
	"time"
	"unsafe"

	"github.com/cairnrun/cairn/abi"
	"github.com/cairnrun/cairn/guest"
)

// counter is incremented by every call: a call that saw a previous call's
// memory would see more than one.
var counter int

// leftOpen is a file a call opened and never closed.
var leftOpen *os.File

// initTime is when init ran: the snapshot's clock.
var initTime = time.Now()

// filled is memory a call filled with a pattern and kept.
var filled []byte

type probeIn struct {
	Write string `json:"write,omitempty"`
	Fill  int    `json:"fill,omitempty"`  // MiB to allocate, fill and keep
	Check int    `json:"check,omitempty"` // MiB to allocate and look at
	Sleep string `json:"sleep,omitempty"` // a time.Duration to sleep first
}

type probeOut struct {
	Counter     int      `json:"counter"`
	LeftOpen    bool     `json:"left_open"`
	Workspace   []string `json:"workspace"`
	Now         string   `json:"now"`
	InitTime    string   `json:"init_time"`
	CryptoRand  string   `json:"crypto_rand"`
	MathRand    uint64   `json:"math_rand"`
	Environ     []string `json:"environ"`
	Args        []string `json:"args"`
	GetenvProbe string   `json:"getenv_probe"`
	NonZero     int      `json:"non_zero"`
	// WorkspaceRights are the rights fd_fdstat_get reports of the
	// workspace's preopen, descriptor 3.
	WorkspaceRights uint64 `json:"workspace_rights"`
}

func probe(c *guest.Call, in probeIn) (string, error) {
	counter++
	out := probeOut{Counter: counter, LeftOpen: leftOpen != nil, Now: time.Now().UTC().Format(time.RFC3339Nano),
		InitTime: initTime.UTC().Format(time.RFC3339Nano), MathRand: rand.Uint64(),
		Environ: os.Environ(), Args: os.Args, GetenvProbe: os.Getenv("PROBE")}
	var st struct {
		filetype         uint8
		flags            uint16
		base, inheriting uint64
	}
	if fdFdstatGet(3, unsafe.Pointer(&st)) == 0 {
		out.WorkspaceRights = st.base
	}
	b := make([]byte, 16)
	crand.Read(b)
	out.CryptoRand = hex.EncodeToString(b)
	entries, err := os.ReadDir(c.Workspace)
	if err != nil {
		return "", err
	}
	for _, e := range entries {
		out.Workspace = append(out.Workspace, e.Name())
	}
	if in.Sleep != "" {
		d, err := time.ParseDuration(in.Sleep)
		if err != nil {
			return "", err
		}
		time.Sleep(d)
	}
	if in.Write != "" {
		if leftOpen, err = os.Create(c.Path(in.Write)); err != nil {
			return "", err
		}
		leftOpen.WriteString(strings.Repeat("x", 10))
	}
	if in.Fill > 0 {
		filled = make([]byte, in.Fill<<20)
		for i := range filled {
			filled[i] = 0xa5
		}
	}
	if in.Check > 0 {
		// The Go runtime takes memory it has just grown to be zero and
		// does not clear it: had an earlier call's memory been handed on
		// as it was left, its bytes would show here.
		for _, b := range make([]byte, in.Check<<20) {
			if b != 0 {
				out.NonZero++
			}
		}
	}
	j, err := json.Marshal(out)
	return string(j), err
}

//go:wasmimport wasi_snapshot_preview1 fd_fdstat_get
func fdFdstatGet(fd int32, stat unsafe.Pointer) uint32

func tools() []guest.Tool {
	return []guest.Tool{guest.Define("probe", "Reports what the call sees.", probe,
		guest.Needs(abi.Needs{Workspace: abi.AccessReadWrite}))}
}

func init() { guest.Export(tools()...) }

func main() { guest.Main() }
