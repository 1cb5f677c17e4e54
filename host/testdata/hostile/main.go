// Command hostile is a tool module that misbehaves on request, for the
// host's tests: every way a tool can fail must come back to the model as
// an error result, and the run must go on.
package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/cairnrun/cairn/guest"
)

type empty struct{}

type appendIn struct {
	Path string `json:"path" desc:"a file in the workspace"`
	Line string `json:"line" desc:"the line to append"`
}

type appendWaitIn struct {
	Path  string `json:"path" desc:"a file in the workspace"`
	Line  string `json:"line" desc:"the line to append"`
	Until string `json:"until" desc:"the file whose making ends the wait"`
}

type removeIn struct {
	Path string `json:"path" desc:"a file in the workspace"`
}

type pathIn struct {
	Path string `json:"path" desc:"an absolute path"`
}

type floodIn struct {
	N int `json:"n" desc:"how many files to make"`
}

type echoIn struct {
	Text string `json:"text" desc:"what to echo"`
	N    int    `json:"n" desc:"a number between 1 and 3"`
}

func main() {
	guest.Main(
		guest.Define("echo", "Echoes its text.", func(c *guest.Call, in echoIn) (string, error) {
			return fmt.Sprintf("%s x%d", in.Text, in.N), nil
		}),
		guest.Define("spin", "Loops forever.", func(c *guest.Call, _ empty) (string, error) {
			for {
			}
		}),
		guest.Define("crash", "Exits with status 7 after logging.", func(c *guest.Call, _ empty) (string, error) {
			fmt.Fprintln(os.Stderr, "hostile: about to crash")
			os.Exit(7)
			return "", nil
		}),
		guest.Define("garbage", "Writes garbage instead of a response.", func(c *guest.Call, _ empty) (string, error) {
			os.Stdout.WriteString("this is not CBOR")
			os.Exit(0)
			return "", nil
		}),
		guest.Define("escape", "Tries to read /etc/passwd and ../ outside the workspace.", func(c *guest.Call, _ empty) (string, error) {
			var out string
			for _, p := range []string{"/etc/passwd", "../outside.txt", "/workspace/../outside.txt"} {
				b, err := os.ReadFile(p)
				out += fmt.Sprintf("%s: %q %v\n", p, b, err)
			}
			return out, nil
		}, guest.Needs(guestNeedsRO())),
		guest.Define("append", "Appends a line to a file of the workspace.", func(c *guest.Call, in appendIn) (string, error) {
			f, err := os.OpenFile("/workspace/"+in.Path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
			if err != nil {
				return "", err
			}
			defer f.Close()
			_, err = f.WriteString(in.Line + "\n")
			return "appended", err
		}, guest.Needs(guestNeedsRW())),
		guest.Define("remove", "Removes a file of the workspace.", func(c *guest.Call, in removeIn) (string, error) {
			return "removed", os.Remove("/workspace/" + in.Path)
		}, guest.Needs(guestNeedsRW())),
		guest.Define("swap", "Turns a file of the workspace into a directory holding a file inner, or a directory (of files) into a file, in one call.", func(c *guest.Call, in removeIn) (string, error) {
			p := "/workspace/" + in.Path
			fi, err := os.Stat(p)
			if err != nil {
				return "", err
			}
			if fi.IsDir() {
				if err := os.RemoveAll(p); err != nil {
					return "", err
				}
				return "a file now", os.WriteFile(p, []byte("was a directory\n"), 0o644)
			}
			if err := os.Remove(p); err != nil {
				return "", err
			}
			if err := os.Mkdir(p, 0o755); err != nil {
				return "", err
			}
			return "a directory now", os.WriteFile(p+"/inner", []byte("was a file\n"), 0o644)
		}, guest.Needs(guestNeedsRW())),
		guest.Define("scribble", "Writes a file, then crashes.", func(c *guest.Call, in pathIn) (string, error) {
			os.WriteFile("/workspace/"+in.Path, []byte("half done"), 0o644)
			os.Exit(3)
			return "", nil
		}, guest.Needs(guestNeedsRW())),
		guest.Define("flood", "Makes n small files, going on past every error.", func(c *guest.Call, in floodIn) (string, error) {
			made := 0
			for i := range in.N {
				if os.WriteFile(fmt.Sprintf("/workspace/f%06d", i), []byte("x"), 0o644) == nil {
					made++
				}
			}
			return fmt.Sprintf("made %d files", made), nil
		}, guest.Needs(guestNeedsRW())),
		guest.Define("deepflood", "Makes a chain of directories with long names and n empty files at its bottom, going on past every error.", func(c *guest.Call, in floodIn) (string, error) {
			dir := "/workspace"
			for i := range 15 {
				dir += fmt.Sprintf("/%03d%s", i, strings.Repeat("d", 247))
				os.Mkdir(dir, 0o755)
			}
			made := 0
			for i := range in.N {
				if os.WriteFile(fmt.Sprintf("%s/f%06d", dir, i), nil, 0o644) == nil {
					made++
				}
			}
			return fmt.Sprintf("made %d files", made), nil
		}, guest.Needs(guestNeedsRW())),
		guest.Define("linkreads", "Opens n distinct names of the workspace's file f, each of 8 links of 250 letters a to d (links to \".\" the workspace holds), stopping at the first error.", func(c *guest.Call, in floodIn) (string, error) {
			for i := range in.N {
				p := "/workspace"
				for k, d := 0, i; k < 8; k, d = k+1, d/4 {
					p += "/" + strings.Repeat(string(rune('a'+d%4)), 250)
				}
				f, err := os.Open(p + "/f")
				if err != nil {
					return fmt.Sprintf("opened %d names", i), nil
				}
				f.Close()
			}
			return fmt.Sprintf("opened %d names", in.N), nil
		}, guest.Needs(guestNeedsRO())),
		guest.Define("chatty", "Logs a secret to stderr, then answers.", func(c *guest.Call, _ empty) (string, error) {
			fmt.Fprintln(os.Stderr, "hostile: log line for the user only")
			return "answered", nil
		}),
		guest.Define("latin1", "Answers in Latin-1, which is not UTF-8.", func(c *guest.Call, _ empty) (string, error) {
			return "caf\xe9 cr\xe8me", nil
		}),
		guest.Define("appendwait", "Appends a line to a file of the workspace, then waits until the file until exists.", func(c *guest.Call, in appendWaitIn) (string, error) {
			f, err := os.OpenFile("/workspace/"+in.Path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
			if err != nil {
				return "", err
			}
			defer f.Close()
			if _, err := f.WriteString(in.Line + "\n"); err != nil {
				return "", err
			}
			for {
				if _, err := os.Stat("/workspace/" + in.Until); err == nil {
					return "appended", nil
				}
			}
		}, guest.Needs(guestNeedsRW())),
		guest.Define("readwait", "Reads a file of the workspace whole, then waits until its size is no longer what it read.", func(c *guest.Call, in pathIn) (string, error) {
			b, err := os.ReadFile("/workspace/" + in.Path)
			if err != nil {
				return "", err
			}
			for {
				if fi, err := os.Stat("/workspace/" + in.Path); err != nil || fi.Size() != int64(len(b)) {
					return string(b), nil
				}
			}
		}, guest.Needs(guestNeedsRO())),
		guest.Define("cat", "Reads any path it is given, then tries to write beside it.", func(c *guest.Call, in pathIn) (string, error) {
			b, err := os.ReadFile(in.Path)
			if err != nil {
				return "", err
			}
			werr := os.WriteFile(in.Path+".new", b, 0o644)
			return fmt.Sprintf("%s (write beside it: %v)", b, werr), nil
		}),
	)
}
