package main

import (
	"slices"

	"github.com/urfave/cli/v2"
)

// namespaceFlag picks the namespace of the store a command works in.
var namespaceFlag = &cli.StringFlag{Name: "namespace", EnvVars: []string{"CAIRN_NAMESPACE"},
	Usage: "the namespace of the store (a tenant's or an application's agents, apart from the others'); default: the default one"}

// withNamespace gives every command that opens the store, and their
// subcommands, the --namespace flag.
func withNamespace(cmds []*cli.Command) {
	for _, c := range cmds {
		if slices.Contains(c.Flags, cli.Flag(storeFlag)) {
			c.Flags = append(c.Flags, namespaceFlag)
		}
		withNamespace(c.Subcommands)
	}
}
