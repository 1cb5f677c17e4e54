//go:build linux

// Package rss reads the process's resident set size from Linux's
// /proc/self/status, for the tests and benchmarks that hold the host's
// memory to a bound: reset the peak, do the work, read the peak.
package rss

import (
	"bufio"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"strings"
)

// ResetPeak frees what the garbage collector can and makes the process's
// peak resident set size its current one (Linux's clear_refs 5),
// returning the current size in bytes.
//
// # Errors
//
// Where /proc/self/clear_refs cannot be written (not Linux's procfs, or
// not allowed), or /proc/self/status cannot be read.
func ResetPeak() (int64, error) {
	runtime.GC()
	debug.FreeOSMemory()
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		return 0, fmt.Errorf("reset peak RSS: %w", err)
	}
	return status("VmRSS")
}

// Peak is the process's peak resident set size in bytes since the last
// reset.
func Peak() (int64, error) { return status("VmHWM") }

// status reads a size field of /proc/self/status, in bytes.
func status(field string) (int64, error) {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), field+":"); ok {
			var kb int64
			_, err := fmt.Sscanf(strings.TrimSpace(rest), "%d kB", &kb)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("no %s in /proc/self/status", field)
}
