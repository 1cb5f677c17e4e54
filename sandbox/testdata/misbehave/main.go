// Command misbehave does what its first argument says, for the sandbox's
// tests of limits and failures.
package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"
)

var sink [][]byte

func recurse(n int) int {
	var pad [64]byte
	pad[n%64] = byte(n)
	return recurse(n+1) + int(pad[0])
}

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: misbehave WHAT")
		os.Exit(2)
	}
	switch os.Args[1] {
	case "spin":
		for {
		}
	case "sleep":
		time.Sleep(time.Hour)
	case "exit":
		fmt.Fprintln(os.Stderr, "misbehave: giving up")
		os.Exit(7)
	case "panic":
		panic("misbehave panics")
	case "membomb":
		for {
			sink = append(sink, make([]byte, 1<<20))
		}
	case "flood":
		line := strings.Repeat("x", 1023) + "\n"
		for i := 0; i < 1<<14; i++ {
			os.Stdout.WriteString(line)
		}
	case "recurse":
		fmt.Println(recurse(0))
	case "env":
		fmt.Println(strings.Join(os.Environ(), "\n"))
	case "readonly":
		for _, op := range []func() error{
			func() error { return os.WriteFile("/ro/new.txt", []byte("x"), 0o644) },
			func() error { return os.WriteFile("/ro/inside.txt", []byte("x"), 0o644) },
			func() error { return os.Mkdir("/ro/dir", 0o755) },
			func() error { return os.Remove("/ro/inside.txt") },
			func() error { return os.Rename("/ro/inside.txt", "/ro/moved.txt") },
			func() error { return os.Chtimes("/ro/inside.txt", time.Unix(1, 0), time.Unix(1, 0)) },
			func() error { return os.Truncate("/ro/inside.txt", 0) },
		} {
			fmt.Println(op())
		}
	case "stdin":
		io.Copy(os.Stdout, os.Stdin)
	case "cat":
		b, err := os.ReadFile(os.Args[2])
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Stdout.Write(b)
	}
}
