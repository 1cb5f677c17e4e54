package mcp

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cairnrun/cairn/host"
)

// transport reaches s: over Streamable HTTP, its answers read through
// capped, or as a command (see command). Either reads no message of more
// than limit bytes.
func transport(s host.MCPServer, dir string, limit int) sdk.Transport {
	if s.URL != "" {
		hc := &http.Client{Transport: capped{next: headers{s.Headers}, limit: limit}}
		// The SDK's own bound on an event only backs up capped's: past it,
		// it ends the connection.
		return &sdk.StreamableClientTransport{Endpoint: s.URL, HTTPClient: hc, MaxEventSize: 2 * limit}
	}
	prog := s.Command[0]
	if strings.ContainsRune(prog, filepath.Separator) && !filepath.IsAbs(prog) {
		prog = filepath.Join(dir, prog)
	}
	cmd := exec.Command(prog, s.Command[1:]...)
	cmd.Dir, cmd.Stderr = dir, os.Stderr
	cmd.Env = environ(s.Env)
	cmd.SysProcAttr = serverProcAttr()
	return command{cmd: cmd, limit: limit}
}

// command is a server started as a command and spoken to over its stdin
// and stdout, as the SDK's CommandTransport does, but in a process group
// of its own and with what it writes read through frames.
type command struct {
	cmd   *exec.Cmd
	limit int
}

func (t command) Connect(ctx context.Context) (sdk.Connection, error) {
	stdout, err := t.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stdin, err := t.cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	if err := t.cmd.Start(); err != nil {
		return nil, err
	}
	a := &asked{}
	r := &frames{br: bufio.NewReaderSize(stdout, 64<<10), limit: t.limit, asked: a}
	// The SDK's own bound on a message only backs up frames': past it,
	// it ends the connection.
	conn := &sdk.IOTransport{Reader: serverStdout{r}, Writer: &process{cmd: t.cmd, stdin: stdin, asked: a}, MaxLineLength: 2 * t.limit}
	return conn.Connect(ctx)
}

// serverStdout is a server's stdout, which is not closed here: the
// server is ended through its stdin (see process), and its stdout closed
// once it has exited.
type serverStdout struct{ *frames }

func (serverStdout) Close() error { return nil }

// terminateWait is how long process.Close waits for the server to exit
// before each signal, as the SDK's CommandTransport does.
const terminateWait = 5 * time.Second

// process is a server's stdin. Closing it ends the server as the MCP
// specification says: stdin closed, then, if it has not exited within
// terminateWait, SIGTERM to its process group, and then SIGKILL.
type process struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	asked *asked // told of each request written (the SDK writes one a Write)
}

func (p *process) Write(b []byte) (int, error) {
	p.asked.write(b)
	return p.stdin.Write(b)
}

func (p *process) Close() error {
	p.stdin.Close()
	exited := make(chan struct{})
	go func() {
		p.cmd.Wait()
		close(exited)
	}()
	for _, sig := range []syscall.Signal{0, syscall.SIGTERM, syscall.SIGKILL} {
		if sig != 0 {
			syscall.Kill(-p.cmd.Process.Pid, sig)
		}
		select {
		case <-exited:
			return nil
		case <-time.After(terminateWait):
		}
	}
	return fmt.Errorf("MCP server %s (pid %d) did not exit after SIGKILL", p.cmd.Path, p.cmd.Process.Pid)
}

// environ is the command's environment: PATH, HOME and what env lists.
func environ(env []string) []string {
	out := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}
	for _, e := range env {
		if strings.Contains(e, "=") {
			out = append(out, e)
		} else if v, ok := os.LookupEnv(e); ok {
			out = append(out, e+"="+v)
		}
	}
	return out
}
