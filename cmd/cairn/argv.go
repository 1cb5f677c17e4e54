package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"
)

// completeFlag is the argument urfave/cli's shell completion appends.
const completeFlag = "--generate-bash-completion"

// passThrough names the commands whose arguments after the first belong to
// something else: exec's ARGS are the module's, flags included.
var passThrough = map[string]bool{"exec": true}

// reorderArgs lets flags come before and after a command's positional
// arguments, as people type them: `cairn show AGENT --json`. urfave/cli v2
// stops reading flags at the first positional argument, so the arguments
// of the command named in args are put back in the order it reads: each
// flag with its value (known from the command's own flag definitions),
// then `--`, then the positional arguments. A `--` typed by the user ends
// the flags there. An unknown command is a usage error.
func reorderArgs(cmds []*cli.Command, args []string) ([]string, error) {
	if len(args) == 0 || args[len(args)-1] == completeFlag {
		return args, nil // completion reads the words as typed
	}
	out, err := reorderIn(cmds, args[1:], "cairn")
	if err != nil {
		return nil, err
	}
	return append([]string{args[0]}, out...), nil
}

// reorderIn reorders args, which start with the app's or a parent
// command's own flags and then name one of cmds.
func reorderIn(cmds []*cli.Command, args []string, path string) ([]string, error) {
	i := 0
	for i < len(args) && isFlag(args[i]) {
		i++
	}
	if i == len(args) || args[i] == "--" {
		return args, nil
	}
	if err := flagsBefore(cmds, args, path); err != nil {
		return nil, err
	}
	if isHelp(args[i]) {
		// help TOPIC names a command too: an unknown one is a usage error.
		if t := i + 1; t < len(args) && !isFlag(args[t]) && findCommand(cmds, args[t]) == nil && !isHelp(args[t]) {
			return nil, withCode(exitUsage, fmt.Errorf("%sno command %q; `%s help` lists them", commandPrefix(path), args[t], path))
		}
		if t := i + 1; t < len(args) && findCommand(cmds, args[t]) != nil {
			// help TOPIC is TOPIC --help, which alone lists a command's
			// subcommands.
			topic := append(append(args[:i:i], args[t:]...), "--help")
			return reorderIn(cmds, topic, path)
		}
		return args, nil
	}
	cmd := findCommand(cmds, args[i])
	if cmd == nil {
		return nil, withCode(exitUsage, fmt.Errorf("%sno command %q; `%s help` lists them", commandPrefix(path), args[i], path))
	}
	head := args[: i+1 : i+1]
	if len(cmd.Subcommands) > 0 {
		tail, err := reorderIn(cmd.Subcommands, args[i+1:], path+" "+cmd.Name)
		return append(head, tail...), err
	}
	full := path + " " + cmd.Name
	tail, err := reorderFlags(cmd, args[i+1:])
	if err != nil {
		return nil, withCode(exitUsage, fmt.Errorf("%s: %w; `%s --help` lists its flags", strings.TrimPrefix(full, "cairn "), err, full))
	}
	return append(head, tail...), nil
}

// flagsBefore refuses a command's flags typed before it, any number of
// them, as `cairn --store DIR --json ls`: the first command of cmds that
// args name after flags alone, each with its value when it takes one, is
// shown with the flags after it, where they go; with no command they fit,
// the first flag the first command named does not take is named. Help's
// flags alone, and args that name no command after flags, are left to
// what reads them.
func flagsBefore(cmds []*cli.Command, args []string, path string) error {
	if len(args) == 0 || !isFlag(args[0]) || args[0] == "--" {
		return nil
	}
	var refused error
	for j := 1; j < len(args) && args[j] != "--"; j++ {
		words, leaf := commandWords(cmds, args[j:])
		if isFlag(args[j]) || leaf == nil {
			continue
		}
		flags, full := args[:j], path+" "+strings.Join(words, " ")
		typed := strings.Join(flags, " ")
		switch n, unknown, ok := flagsOf(leaf, flags); {
		case ok && !slices.ContainsFunc(flags, func(f string) bool { return !asksHelp([]string{f}) }):
			return nil // help's flags alone: the command's help
		case ok && n == 1:
			return withCode(exitUsage, fmt.Errorf("%s%s goes after the command it belongs to: %s %s",
				commandPrefix(path), typed, full, typed))
		case ok:
			return withCode(exitUsage, fmt.Errorf("%s%s go after the command they belong to: %s %s",
				commandPrefix(path), typed, full, typed))
		case unknown != "" && refused == nil:
			// A later command the flags fit may be the one meant, the
			// earlier name a flag's value.
			refused = withCode(exitUsage, fmt.Errorf("%s%s: a flag goes after the command it belongs to, and %s takes no %s; `%s --help` lists its flags",
				commandPrefix(path), typed, full, unknown, full))
		}
	}
	return refused
}

// flagsOf reads args as cmd's flags, each with its value when it takes
// one: ok when they are, with n the number of flags; the first flag cmd
// does not take, when there is one, is unknown.
func flagsOf(cmd *cli.Command, args []string) (n int, unknown string, ok bool) {
	for k := 0; k < len(args); k++ {
		a := args[k]
		switch {
		case !isFlag(a):
			return n, "", false
		case !hasFlag(cmd, a) && !asksHelp([]string{a}):
			return n, a, false
		case takesValue(cmd, a):
			if k++; k == len(args) {
				return n, "", false
			}
		}
		n++
	}
	return n, "", true
}

// reorderFlags puts cmd's flags (with their values) before its positional
// arguments, which follow a `--`.
func reorderFlags(cmd *cli.Command, args []string) ([]string, error) {
	var flags, positional []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			positional = append(positional, args[i+1:]...)
			i = len(args)
		case !isFlag(a):
			positional = append(positional, a)
			if passThrough[cmd.Name] {
				positional = append(positional, args[i+1:]...)
				i = len(args)
			}
		default:
			flags = append(flags, a)
			if !takesValue(cmd, a) {
				continue
			}
			if i+1 == len(args) {
				return nil, fmt.Errorf("flag needs a value: %s", a)
			}
			i++
			flags = append(flags, args[i])
		}
	}
	if len(positional) == 0 || asksHelp(flags) {
		return flags, nil
	}
	return append(append(flags, "--"), positional...), nil
}

// asksHelp says whether flags ask for the command's help, which then
// takes no arguments.
func asksHelp(flags []string) bool {
	for _, f := range flags {
		if f == "-h" || f == "--help" || f == "-help" {
			return true
		}
	}
	return false
}

// isFlag says whether a looks like a flag: a dash and more ("-" alone is
// an argument, by custom standard input).
func isFlag(a string) bool { return len(a) > 1 && a[0] == '-' }

// takesValue says whether the flag a (as typed, without "=VALUE") is one
// of cmd's flags that reads the next argument as its value. Unknown flags
// take none; urfave/cli reports them.
func takesValue(cmd *cli.Command, a string) bool {
	if strings.Contains(a, "=") {
		return false
	}
	name := strings.TrimLeft(a, "-")
	for _, f := range cmd.Flags {
		for _, n := range f.Names() {
			if n == name {
				v, ok := f.(cli.DocGenerationFlag)
				return ok && v.TakesValue()
			}
		}
	}
	return false
}

// commandPrefix is what an error about the command at path starts with:
// nothing for cairn itself, whose errors say "cairn:" already.
func commandPrefix(path string) string {
	if p := strings.TrimPrefix(path, "cairn"); p != "" {
		return strings.TrimSpace(p) + ": "
	}
	return ""
}

// commandWords are the names of a command of cmds and its subcommands
// that args begin with, and the last of them; none when args begin with
// no command's name.
func commandWords(cmds []*cli.Command, args []string) ([]string, *cli.Command) {
	if len(args) == 0 {
		return nil, nil
	}
	cmd := findCommand(cmds, args[0])
	if cmd == nil {
		return nil, nil
	}
	words, leaf := commandWords(cmd.Subcommands, args[1:])
	if leaf == nil {
		leaf = cmd
	}
	return append([]string{args[0]}, words...), leaf
}

// hasFlag says whether cmd takes the flag a, as typed.
func hasFlag(cmd *cli.Command, a string) bool {
	name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
	for _, f := range cmd.Flags {
		if slices.Contains(f.Names(), name) {
			return true
		}
	}
	return false
}

// findCommand is the command of cmds named or aliased name, or nil.
func findCommand(cmds []*cli.Command, name string) *cli.Command {
	for _, c := range cmds {
		if c.HasName(name) {
			return c
		}
	}
	return nil
}

// usageErrors makes every command's flag errors usage errors (exit 2, the
// message on stderr, no help printed unasked), and a command that needs a
// subcommand say so.
func usageErrors(cmds []*cli.Command, path string) {
	for _, c := range cmds {
		name := path + " " + c.Name
		short := strings.TrimPrefix(name, "cairn ")
		c.OnUsageError = func(_ *cli.Context, err error, _ bool) error {
			return withCode(exitUsage, fmt.Errorf("%s: %w; `%s --help` lists its flags", short, err, name))
		}
		if len(c.Subcommands) > 0 && c.Action == nil {
			c.Action = needsSubcommand(name, c.Subcommands)
		}
		if len(c.Subcommands) == 0 && c.ArgsUsage == "" && c.Action != nil {
			c.Action = noArguments(name, c.Action)
		}
		// An argument named h or help is an agent's id, not the help
		// command urfave/cli gives every command.
		c.HideHelpCommand = len(c.Subcommands) == 0
		usageErrors(c.Subcommands, name)
	}
}

func needsSubcommand(name string, subs []*cli.Command) cli.ActionFunc {
	var names []string
	for _, s := range subs {
		names = append(names, s.Name)
	}
	return func(c *cli.Context) error {
		if c.NArg() > 0 {
			return withCode(exitUsage, fmt.Errorf("%sno command %q; `%s help` lists them", commandPrefix(name), c.Args().First(), name))
		}
		return withCode(exitUsage, fmt.Errorf("%sneeds a command: %s; `%s help` says what each does", commandPrefix(name), strings.Join(names, ", "), name))
	}
}

// noArguments refuses the arguments of the command name, which takes none
// (its ArgsUsage says none), before its action does anything: gc would
// otherwise collect every agent's files, though one agent was named.
func noArguments(name string, action cli.ActionFunc) cli.ActionFunc {
	return func(c *cli.Context) error {
		if c.NArg() > 0 {
			return withCode(exitUsage, fmt.Errorf("%stakes no arguments, and was given %q; `%s --help` says what it takes", commandPrefix(name), c.Args().First(), name))
		}
		return action(c)
	}
}

// isHelp says whether word names the help command.
func isHelp(word string) bool { return word == "help" || word == "h" }
