package main

import (
	"slices"

	"github.com/urfave/cli/v2"
)

// namespaceFlag names the flag that picks the namespace of the store a
// command works in.
const namespaceFlag = "namespace"

// newNamespaceFlag is the flag, made for each command: urfave/cli keeps
// the value it read from the environment in the flag, so one flag shared
// by every app of a process would keep the first one it read.
func newNamespaceFlag() cli.Flag {
	return &cli.StringFlag{Name: namespaceFlag, EnvVars: []string{"CAIRN_NAMESPACE"},
		Usage: "the namespace of the store (a tenant's or an application's agents, apart from the others'); default: the default one"}
}

// withNamespace gives every command that opens the store, and their
// subcommands, the --namespace flag.
func withNamespace(cmds []*cli.Command) {
	for _, c := range cmds {
		if slices.ContainsFunc(c.Flags, func(f cli.Flag) bool { return f.Names()[0] == storeFlag }) {
			c.Flags = append(c.Flags, newNamespaceFlag())
		}
		withNamespace(c.Subcommands)
	}
}
