// Command ovprog changes files as its arguments say, one operation each,
// and prints one line per operation: the operation and what it got. An
// operation is OP:PATH or OP:PATH:ARG:
//
//	write:P:TEXT   append:P:TEXT   cat:P   rm:P   mkdir:P   rmdir:P
//	mv:FROM:TO     ls:DIR          stat:P  trunc:P:SIZE
//	fill:P:BYTES   writes BYTES bytes in 64 KiB pieces, printing how many it wrote
//	many:DIR:N     writes N files DIR/f000... of one line each
//	head:P:N       reads the first N bytes of P, and not on to its end
//	pread:P:OFF    reads P from offset OFF, with pread
//	deep:DIR:N     opens DIR/a/a/... (N names a), whose path is 2N bytes past
//	               DIR, printing the error without the path
//	loops:DIR:N    opens and closes N distinct paths DIR/X/X/.../f, each of 8 names
//	               X, a run of 250 letters a to d (i's digits in base 4):
//	               through links to "." they are the one file DIR/f; prints
//	               how many opened and the first error
//
// The sandbox's tests run it on overlays and on plain mounts and compare.
package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

func main() {
	for _, arg := range os.Args[1:] {
		parts := strings.SplitN(arg, ":", 3)
		for len(parts) < 3 {
			parts = append(parts, "")
		}
		out, err := do(parts[0], parts[1], parts[2])
		if err != nil {
			out = strings.TrimPrefix(out+" err "+err.Error(), " ")
		}
		fmt.Printf("%s %s %s\n", parts[0], parts[1], out)
	}
}

func do(op, p, arg string) (string, error) {
	switch op {
	case "write":
		return "ok", os.WriteFile(p, []byte(arg), 0o644)
	case "append":
		f, err := os.OpenFile(p, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			return "", err
		}
		if _, err := f.WriteString(arg); err != nil {
			f.Close()
			return "", err
		}
		return "ok", f.Close()
	case "cat":
		b, err := os.ReadFile(p)
		return strconv.Quote(string(b)), err
	case "head", "pread":
		return readPart(op, p, arg)
	case "rm":
		return "ok", os.Remove(p)
	case "mkdir":
		return "ok", os.Mkdir(p, 0o755)
	case "rmdir":
		return "ok", os.Remove(p)
	case "mv":
		return "ok", os.Rename(p, arg)
	case "ls":
		ents, err := os.ReadDir(p)
		var names []string
		for _, e := range ents {
			n := e.Name()
			if e.IsDir() {
				n += "/"
			}
			names = append(names, n)
		}
		return "[" + strings.Join(names, " ") + "]", err
	case "stat":
		fi, err := os.Stat(p)
		if err != nil {
			return "", err
		}
		if fi.IsDir() {
			return "dir", nil
		}
		return fmt.Sprintf("file %d", fi.Size()), nil
	case "trunc":
		n, _ := strconv.ParseInt(arg, 10, 64)
		return "ok", os.Truncate(p, n)
	case "fill":
		return fill(p, arg)
	case "deep":
		n, _ := strconv.Atoi(arg)
		f, err := os.Open(p + strings.Repeat("/a", n))
		if err != nil {
			return "", err.(*os.PathError).Err // not the path, which may be huge
		}
		return "ok", f.Close()
	case "loops":
		return loops(p, arg)
	case "many":
		n, _ := strconv.Atoi(arg)
		for i := 0; i < n; i++ {
			name := fmt.Sprintf("%s/f%03d", p, i)
			if err := os.WriteFile(name, []byte(fmt.Sprintf("file %d\n", i)), 0o644); err != nil {
				return "", err
			}
		}
		return "ok", nil
	}
	return "", fmt.Errorf("unknown operation %q", op)
}

func fill(p, arg string) (string, error) {
	want, _ := strconv.Atoi(arg)
	f, err := os.Create(p)
	if err != nil {
		return "", err
	}
	defer f.Close()
	piece := make([]byte, 64<<10)
	written := 0
	for written < want {
		n, err := f.Write(piece[:min(len(piece), want-written)])
		written += n
		if err != nil {
			return fmt.Sprintf("wrote %d", written), err
		}
	}
	return fmt.Sprintf("wrote %d", written), nil
}

func readPart(op, p, arg string) (string, error) {
	n, _ := strconv.Atoi(arg)
	f, err := os.Open(p)
	if err != nil {
		return "", err
	}
	defer f.Close()
	buf := make([]byte, 64)
	if op == "head" {
		k, err := f.Read(buf[:n])
		return strconv.Quote(string(buf[:k])), err
	}
	k, _ := f.ReadAt(buf, int64(n))
	return strconv.Quote(string(buf[:k])), nil
}

func loops(dir, arg string) (string, error) {
	n, _ := strconv.Atoi(arg)
	opened := 0
	for i := 0; i < n; i++ {
		p := dir
		for k, d := 0, i; k < 8; k, d = k+1, d/4 {
			p += "/" + strings.Repeat(string(rune('a'+d%4)), 250)
		}
		f, err := os.Open(p + "/f")
		if err != nil {
			return fmt.Sprintf("opened %d", opened), err.(*os.PathError).Err
		}
		f.Close()
		opened++
	}
	return fmt.Sprintf("opened %d", opened), nil
}
