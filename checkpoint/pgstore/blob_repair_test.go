package pgstore_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/cairnrun/cairn/checkpoint"
)

// Regression: a blob whose row was damaged was never repaired. PutBlob of
// its content only touched the row's time, so the agents that stored it
// since (a new run of the same agent file, an import of a good export that
// holds it) were committed over bytes that cannot be read, and the error
// told a database's user to restore a file. Storing the blob again now
// gives the row its bytes back; a row that holds them keeps them.
func TestCorruptBlobRepairedByStoringIt(t *testing.T) {
	url := sharedURL(t)
	s := open(t, url)
	data := []byte("name: reporter\nmodel: script\n")
	d, err := s.PutBlob(data)
	must(t, err)
	execSQL(t, url, `UPDATE cairn_blobs SET data = overlay(data placing 'X'::bytea from 1) WHERE digest = '`+d+`'`)
	_, err = s.Blob(d)
	if !errors.Is(err, checkpoint.ErrCorrupt) {
		t.Fatalf("a damaged blob read: %v, want ErrCorrupt", err)
	}
	var ce *checkpoint.CorruptError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "cairn_blobs") || !strings.Contains(err.Error(), "restore the database") ||
		strings.Contains(err.Error(), "restore the file") {
		t.Fatalf("the error's advice does not fit a database: %v", err)
	}
	if got, err := s.PutBlob(data); err != nil || got != d {
		t.Fatalf("store again: %s, %v", got, err)
	}
	got, err := s.Blob(d)
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("after storing it again: %q, %v; want the row repaired", got, err)
	}
	if _, err := s.PutBlob(data); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Blob(d); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("a sound row stored again: %q, %v", got, err)
	}
}
