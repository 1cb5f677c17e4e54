package main

import (
	"errors"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/cairnrun/cairn/host"
)

// durationFlag is a flag that takes a duration, read as an agent file's
// are (host.ParseDuration): one longer than cairn counts is refused
// naming the longest, where urfave/cli's DurationFlag says "parse
// error". c.Duration reads it.
func durationFlag(name string, value time.Duration, usage string) cli.Flag {
	return &cli.GenericFlag{Name: name, Value: &durationValue{value}, Usage: usage}
}

// durationValue is a durationFlag's value.
type durationValue struct{ d time.Duration }

func (v *durationValue) Set(s string) error {
	d, err := host.ParseDuration(s)
	var long *host.DurationTooLongError
	if errors.As(err, &long) {
		return errors.New("longer than cairn counts; the longest is " + long.Longest())
	}
	if err != nil {
		return errors.New("want a duration such as 30s or 1m30s")
	}
	v.d = d
	return nil
}

func (v *durationValue) String() string { return v.d.String() }
