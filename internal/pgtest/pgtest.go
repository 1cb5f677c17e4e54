// Package pgtest starts throwaway PostgreSQL servers for tests: initdb in
// a temporary directory, pg_ctl start on a unix socket there, stopped when
// the test ends. As root (the server refuses to run as root) it runs them
// as the "postgres" user. With CAIRN_TEST_POSTGRES set to a connection URL
// it uses that server instead, a fresh database per test.
//
// Without PostgreSQL's binaries the tests that need it skip, saying how to
// get them; in CI (CI=true) they fail instead.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/jackc/pgx/v5"
)

// Server is a PostgreSQL server a test may use.
type Server struct {
	url  string // of the "postgres" database
	dir  string // the cluster's directory; "" for CAIRN_TEST_POSTGRES
	bin  string
	as   *user.User // who runs the server's binaries; nil for the caller
	sock string
	port int // the TCP port it listens on at 127.0.0.1 too; 0 for none
	// watch is the write end of the pipe its watchdog reads (watchdog);
	// held open, never written, for as long as this process lives.
	watch *os.File
}

// Start starts a server of the test's own, stopped at its end.
func Start(t testing.TB) *Server {
	t.Helper()
	s := start(t, 0)
	t.Cleanup(s.remove)
	return s
}

// StartTCP starts a server of the test's own, as Start does, that also
// listens on 127.0.0.1: TCPURL gives a database's URL through it.
func StartTCP(t testing.TB) *Server {
	t.Helper()
	if os.Getenv("CAIRN_TEST_POSTGRES") != "" {
		t.Skip("this test needs a server of its own that listens on 127.0.0.1, not CAIRN_TEST_POSTGRES")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	s := start(t, port)
	t.Cleanup(s.remove)
	return s
}

// TCPURL is the URL of the database of dbURL (from NewDatabase) through
// 127.0.0.1, not the unix socket, of a server StartTCP started.
func (s *Server) TCPURL(t testing.TB, dbURL string) string {
	t.Helper()
	if s.port == 0 {
		t.Fatal("TCPURL of a server that does not listen on TCP: start it with StartTCP")
	}
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Del("host")
	q.Del("port")
	u.RawQuery = q.Encode()
	u.Host = "127.0.0.1:" + strconv.Itoa(s.port)
	return u.String()
}

var shared struct {
	sync.Mutex
	s *Server
}

// Shared is a server the tests of a package share, each in databases of
// its own (NewDatabase). The package's TestMain stops it with StopShared.
func Shared(t testing.TB) *Server {
	t.Helper()
	shared.Lock()
	defer shared.Unlock()
	if shared.s == nil {
		shared.s = start(t, 0)
	}
	return shared.s
}

// StopShared stops the server Shared started, if it did.
func StopShared() {
	shared.Lock()
	defer shared.Unlock()
	if shared.s != nil {
		shared.s.remove()
		shared.s = nil
	}
}

func start(t testing.TB, port int) *Server {
	if u := os.Getenv("CAIRN_TEST_POSTGRES"); u != "" {
		return &Server{url: u}
	}
	bin := findBin(t)
	s := &Server{bin: bin, port: port}
	s.setUser(t)
	s.makeDir(t)
	s.ctl(t, "initdb", "-D", s.data(), "-A", "trust", "-U", "cairn", "--no-sync", "-E", "UTF8")
	s.sock = s.dir
	s.url = fmt.Sprintf("postgres://cairn@/postgres?host=%s&sslmode=disable", url.QueryEscape(s.sock))
	if port != 0 {
		// The unix socket is named by the port too.
		s.url += "&port=" + strconv.Itoa(port)
	}
	s.watchdog(t)
	s.Start(t)
	return s
}

// watchdog starts a shell, as the server's user, that stops the server
// and removes its directory once this process is gone: a test process
// that dies before its cleanups run (killed, or ended by go test's
// -timeout panic) would otherwise leave the server running, and its
// directory, for as long as the machine runs. The shell reads its stdin,
// a pipe whose only write end this process holds (close-on-exec, so no
// other child has it), until the kernel closes that end with the process.
// It has a process group of its own, so that a signal to the test's
// group (an interrupt) does not end it before it has done its work.
func (s *Server) watchdog(t testing.TB) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	script := `cat >/dev/null; "$0" -D "$1" -m immediate -w stop >/dev/null 2>&1; rm -rf "$2"`
	cmd := exec.Command("/bin/sh", "-c", script, filepath.Join(s.bin, "pg_ctl"), s.data(), s.dir)
	cmd.Stdin = r
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if s.as != nil {
		uid, _ := strconv.Atoi(s.as.Uid)
		gid, _ := strconv.Atoi(s.as.Gid)
		cmd.SysProcAttr.Credential = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
	}
	if err := cmd.Start(); err != nil {
		w.Close()
		t.Fatalf("start the test server's watchdog: %v", err)
	}
	go cmd.Wait() // reaped once it ends, with the server's removal
	s.watch = w
}

// remove stops the server and removes its directory, and lets its
// watchdog end.
func (s *Server) remove() {
	if s.dir == "" {
		return
	}
	s.run("pg_ctl", "-D", s.data(), "-m", "immediate", "-w", "stop")
	os.RemoveAll(s.dir)
	if s.watch != nil {
		s.watch.Close()
	}
}

// findBin finds the directory of initdb and pg_ctl, or skips the test.
func findBin(t testing.TB) string {
	if p, err := exec.LookPath("pg_ctl"); err == nil {
		if _, err := os.Stat(filepath.Join(filepath.Dir(p), "initdb")); err == nil {
			return filepath.Dir(p)
		}
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return version(dirs[i]) > version(dirs[j]) })
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil {
			return d
		}
	}
	msg := "PostgreSQL's server binaries (initdb, pg_ctl) not found: install them " +
		"(Debian/Ubuntu: apt-get install postgresql) or set CAIRN_TEST_POSTGRES to a server's URL"
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

func version(dir string) int {
	v, _ := strconv.Atoi(filepath.Base(filepath.Dir(dir)))
	return v
}

// setUser picks the "postgres" user to run the server as when the test
// runs as root.
func (s *Server) setUser(t testing.TB) {
	if os.Geteuid() != 0 {
		return
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		t.Fatalf("running as root, and PostgreSQL refuses root: no \"postgres\" user to run it as: %v", err)
	}
	s.as = u
}

// makeDir makes the cluster's directory, which the server's user owns.
// It is short, since a unix socket's path is limited to about 100 bytes.
func (s *Server) makeDir(t testing.TB) {
	dir, err := os.MkdirTemp("", "cairn-pg-")
	if err != nil {
		t.Fatal(err)
	}
	if s.as != nil {
		uid, _ := strconv.Atoi(s.as.Uid)
		gid, _ := strconv.Atoi(s.as.Gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			t.Fatal(err)
		}
	}
	s.dir = dir
}

func (s *Server) data() string { return filepath.Join(s.dir, "data") }

// run runs one of the server's binaries as the server's user.
func (s *Server) run(name string, args ...string) ([]byte, error) {
	cmd := exec.Command(filepath.Join(s.bin, name), args...)
	if s.as != nil {
		uid, _ := strconv.Atoi(s.as.Uid)
		gid, _ := strconv.Atoi(s.as.Gid)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}
		cmd.Env = append(os.Environ(), "HOME="+s.dir)
	}
	cmd.Dir = s.dir
	return cmd.CombinedOutput()
}

func (s *Server) ctl(t testing.TB, name string, args ...string) {
	t.Helper()
	if out, err := s.run(name, args...); err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
}

// Start starts the server (again, after Stop). It takes more clients than
// PostgreSQL's default 100: the tests of a package share one server, and
// the two-node tests keep processes stopped with their connections open.
func (s *Server) Start(t testing.TB) {
	t.Helper()
	s.needOwn(t)
	listen := "-c listen_addresses="
	if s.port != 0 {
		listen = "-c listen_addresses=127.0.0.1 -p " + strconv.Itoa(s.port)
	}
	s.ctl(t, "pg_ctl", "-D", s.data(), "-l", filepath.Join(s.dir, "log"), "-w",
		"-o", "-k "+s.sock+" "+listen+" -c fsync=on -c synchronous_commit=on -c max_connections=400", "start")
}

// Stop stops the server at once (fast shutdown: connections are cut).
func (s *Server) Stop(t testing.TB) {
	t.Helper()
	s.needOwn(t)
	s.ctl(t, "pg_ctl", "-D", s.data(), "-m", "fast", "-w", "stop")
}

// Crash stops the server as a crash would (immediate shutdown: no
// checkpoint, and what was committed without waiting for the disk and
// not yet written out is lost).
func (s *Server) Crash(t testing.TB) {
	t.Helper()
	s.needOwn(t)
	s.ctl(t, "pg_ctl", "-D", s.data(), "-m", "immediate", "-w", "stop")
}

// Freeze stops the server's postmaster with SIGSTOP, as a host that
// stopped answering would: a new connection is accepted by the kernel and
// never answered. The connections made before go on. It is continued when
// the test ends, if Thaw did not.
func (s *Server) Freeze(t testing.TB) {
	t.Helper()
	s.needOwn(t)
	pid := s.postmaster(t)
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGCONT) })
}

// Thaw continues the postmaster Freeze stopped.
func (s *Server) Thaw(t testing.TB) {
	t.Helper()
	if err := syscall.Kill(s.postmaster(t), syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
}

// postmaster is the pid of the server's postmaster.
func (s *Server) postmaster(t testing.TB) int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(s.data(), "postmaster.pid"))
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.SplitN(string(b), "\n", 2)[0])
	if err != nil {
		t.Fatalf("postmaster.pid: %v", err)
	}
	return pid
}

// Restart restarts the server, cutting every connection.
func (s *Server) Restart(t testing.TB) {
	t.Helper()
	s.Stop(t)
	s.Start(t)
}

func (s *Server) needOwn(t testing.TB) {
	if s.dir == "" {
		t.Skip("this test stops and starts the server: it needs one of its own, not CAIRN_TEST_POSTGRES")
	}
}

// NewDatabase makes an empty database and returns its URL. On a server
// of CAIRN_TEST_POSTGRES it is dropped when the test ends.
func (s *Server) NewDatabase(t testing.TB) string {
	t.Helper()
	b := make([]byte, 6)
	rand.Read(b)
	name := "cairn_test_" + hex.EncodeToString(b)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, s.url)
	if err != nil {
		t.Fatalf("connect to the test server: %v", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("create test database: %v", err)
	}
	if s.dir == "" {
		t.Cleanup(func() { s.drop(name) })
	}
	u, err := url.Parse(s.url)
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/" + name
	return u.String()
}

// drop drops a test's database, cutting its connections.
func (s *Server) drop(name string) {
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, s.url)
	if err != nil {
		return
	}
	defer conn.Close(ctx)
	conn.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
}
