package storetest_test

import (
	"testing"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/checkpoint/storetest"
)

func TestFileStore(t *testing.T) {
	storetest.Run(t, func(t *testing.T) checkpoint.Store {
		s, err := checkpoint.OpenFileStore(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}

func TestFileStoreGroupCommit(t *testing.T) {
	storetest.Run(t, func(t *testing.T) checkpoint.Store {
		s, err := checkpoint.OpenFileStore(t.TempDir(), checkpoint.WithGroupCommit())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	})
}

func TestMemStore(t *testing.T) {
	storetest.Run(t, func(t *testing.T) checkpoint.Store { return checkpoint.NewMemStore() })
}
