package main

import (
	"fmt"
	"runtime/debug"

	"github.com/urfave/cli/v2"

	"github.com/cairnrun/cairn/abi"
)

// version is set at link time (-ldflags "-X main.version=v1.2.3").
var version = "dev"

func versionCommand() *cli.Command {
	return &cli.Command{
		Name:  "version",
		Usage: "print cairn's version, its tool ABI version and its Go version",
		Action: func(c *cli.Context) error {
			goVersion := "unknown"
			if bi, ok := debug.ReadBuildInfo(); ok {
				goVersion = bi.GoVersion
			}
			_, err := fmt.Fprintf(c.App.Writer, "cairn %s (tool ABI %d, %s)\n", version, abi.Version, goVersion)
			return err
		},
	}
}
