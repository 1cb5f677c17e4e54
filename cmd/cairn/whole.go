package main

import (
	"errors"
	"math"
	"strconv"
)

// wholeValue is the value of a flag that takes a count: a whole number
// written in decimal, 1e6 included, as an agent file takes one, where
// urfave/cli's IntFlag says "parse error" for 1.5 and 1e6 and takes 0x10
// as 16. c.Int, c.Int64 and c.Float64 read it.
type wholeValue struct{ n int64 }

func (v *wholeValue) Set(s string) error {
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		v.n = n
		return nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f != math.Trunc(f) || math.Abs(f) >= math.MaxInt64 {
		return errors.New("want a whole number, such as 20 or 200000")
	}
	v.n = int64(f)
	return nil
}

func (v *wholeValue) String() string { return strconv.FormatInt(v.n, 10) }
