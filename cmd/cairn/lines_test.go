package main

import (
	"bufio"
	"bytes"
	"io"
	"os/exec"
	"syscall"
	"time"
)

// readLinesUntil copies r's lines into out until one (without its
// newline) makes stop true, or r ends, and reports whether one did. What
// r read past that line stays in r for the caller: unlike a
// bufio.Scanner's buffer, which the process's later output, read ahead
// on a busy machine, would be lost in.
func readLinesUntil(r *bufio.Reader, out *bytes.Buffer, stop func(line []byte) bool) bool {
	for {
		line, err := r.ReadBytes('\n')
		out.Write(line)
		if len(line) > 0 && stop(bytes.TrimSuffix(line, []byte{'\n'})) {
			return true
		}
		if err != nil {
			return false
		}
	}
}

// killAfter kills cmd after delay, copying the rest of its output from r
// into out meanwhile (so that it never waits on a full pipe), and returns
// once all it printed before it died is in out.
func killAfter(cmd *exec.Cmd, r io.Reader, out *bytes.Buffer, delay time.Duration) {
	done := make(chan struct{})
	go func() {
		io.Copy(out, r)
		close(done)
	}()
	time.Sleep(delay)
	cmd.Process.Signal(syscall.SIGKILL)
	<-done
}
