//go:build !wasip1

package nethttp

func exchange([]byte) ([]byte, error) { return nil, ErrNoHost }
