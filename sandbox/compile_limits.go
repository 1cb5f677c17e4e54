package sandbox

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cairnrun/cairn/sandbox/internal/wasmcode"
	"github.com/tetratelabs/wazero/experimental"
)

// Defaults for the zero fields of Config's compile limits. A Go-built tool
// of 5 MiB has about 3,000 functions, the largest about 50 KiB of code;
// compiling it takes about a second. Each limit is far above that and far
// below what makes compiling take many seconds or hundreds of MiB: it is
// about linear in functions and in code, and a function's code is compiled
// whole, at about 60 bytes of host memory for each byte of it. A build
// with the race detector compiles about ten times slower, and its
// DefaultCompileTimeout is ten times as long.
const (
	DefaultMaxModuleSize   = 64 << 20
	DefaultMaxFunctions    = 100_000
	DefaultMaxFunctionSize = 1 << 20
	DefaultCompileTimeout  = time.Minute * raceSlowdown
)

// The bounds of a module's tables (see boundTables): a Go-built tool's one
// table has some thousands of entries, a C tool's tens. An entry is 8 bytes
// of host memory in every instance, outside the guest's memory limit.
const (
	MaxTables       = 100
	MaxTableEntries = 1 << 20
)

// compileLimits are what a Runtime compiles, from Config.
type compileLimits struct {
	moduleSize, functionSize uint64
	functions                uint64
	timeout                  time.Duration
}

func (c Config) limits() compileLimits {
	pick := func(v, d int) uint64 {
		if v <= 0 {
			return uint64(d)
		}
		return uint64(v)
	}
	return compileLimits{
		moduleSize:   pick(c.MaxModuleSize, DefaultMaxModuleSize),
		functions:    pick(c.MaxFunctions, DefaultMaxFunctions),
		functionSize: pick(c.MaxFunctionSize, DefaultMaxFunctionSize),
		timeout:      orDefault(c.CompileTimeout, DefaultCompileTimeout),
	}
}

// check refuses, before anything decodes it, a module whose size, number
// of functions or largest function passes a limit: what compiling costs
// grows with each. It reads only the section headers and the code
// section's function sizes.
func (l compileLimits) check(wasm []byte) error {
	if uint64(len(wasm)) > l.moduleSize {
		return fmt.Errorf("%w: it is %d bytes, past the limit of %d (Config.MaxModuleSize)", ErrCompileLimit, len(wasm), l.moduleSize)
	}
	secs, err := wasmcode.Sections(wasm)
	if err != nil {
		return err
	}
	if err := l.checkCounts(secs); err != nil {
		return err
	}
	r := &wasmcode.Reader{P: secs[wasmcode.SecCode]}
	n := r.Count()
	if r.Err == nil && n > l.functions {
		return fmt.Errorf("%w: it has %d functions, past the limit of %d (Config.MaxFunctions)", ErrCompileLimit, n, l.functions)
	}
	for i := uint64(0); i < n && r.Err == nil; i++ {
		size := r.Uvarint()
		if r.Err == nil && size > l.functionSize {
			return fmt.Errorf("%w: its function %d has %d bytes of code, past the limit of %d (Config.MaxFunctionSize)", ErrCompileLimit, i, size, l.functionSize)
		}
		r.Bytes(size)
	}
	return r.Err
}

// countedSections are the sections that are vectors of entries, each of
// which a runtime decodes into a structure of its own, by name.
var countedSections = map[byte]string{1: "types", 2: "imports", 3: "functions", 6: "globals", 7: "exports", 9: "element segments", 11: "data segments"}

// checkCounts refuses a module with more entries in one of its sections
// than MaxFunctions: decoding a section of a million small entries costs
// as a million functions do, whatever section they are in.
func (l compileLimits) checkCounts(secs map[byte][]byte) error {
	for id, what := range countedSections {
		r := &wasmcode.Reader{P: secs[id]}
		if n := r.Count(); r.Err == nil && n > l.functions {
			return fmt.Errorf("%w: it has %d %s, past the limit of %d (Config.MaxFunctions)", ErrCompileLimit, n, what, l.functions)
		}
	}
	return nil
}

// boundTables refuses a module whose tables pass MaxTables or start with
// more than MaxTableEntries entries, and lowers their maximums so that
// table.grow cannot take them past MaxTableEntries either: wazero makes a
// table's entries when it makes an instance, before any stop check runs,
// and outside the memory limit (wasmcode.BoundTables).
func boundTables(wasm []byte) ([]byte, error) {
	out, err := wasmcode.BoundTables(wasm, MaxTables, MaxTableEntries)
	var tl *wasmcode.TableLimitError
	if errors.As(err, &tl) {
		return nil, fmt.Errorf("%w: %s", ErrCompileLimit, tl.What)
	}
	return out, err
}

// compileContext bounds a compilation by the limit's timeout and ctx.
// wazero looks at the context between functions only when it compiles
// with more than one worker, so it is given two; a function is compiled
// whole, which MaxFunctionSize bounds.
func (l compileLimits) compileContext(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithTimeout(ctx, l.timeout)
	return experimental.WithCompilationWorkers(ctx, 2), cancel
}
