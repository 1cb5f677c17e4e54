//go:build !unix

package filepool

import "errors"

func mkfifo(string) error { return errors.New("no named pipes") }
