package main

import (
	"runtime"
	"testing"
)

func TestOneMoreProc(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	t.Run("unset", func(t *testing.T) {
		t.Setenv("GOMAXPROCS", "")
		before := runtime.GOMAXPROCS(0)
		oneMoreProc()
		if got := runtime.GOMAXPROCS(0); got != before+1 {
			t.Errorf("GOMAXPROCS = %d after oneMoreProc, want %d", got, before+1)
		}
	})
	t.Run("set by the user", func(t *testing.T) {
		t.Setenv("GOMAXPROCS", "1")
		runtime.GOMAXPROCS(1)
		oneMoreProc()
		if got := runtime.GOMAXPROCS(0); got != 1 {
			t.Errorf("GOMAXPROCS = %d with GOMAXPROCS=1 in the environment, want 1", got)
		}
	})
}
