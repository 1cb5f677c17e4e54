package main

import (
	"errors"
	"fmt"

	"github.com/urfave/cli/v2"
)

// bashCompletion completes cairn's commands, subcommands and flags by
// asking cairn itself (urfave/cli's --generate-bash-completion).
const bashCompletion = `# bash completion for cairn: eval "$(cairn completion bash)"
_cairn_complete() {
	local cur words
	cur="${COMP_WORDS[COMP_CWORD]}"
	words=("${COMP_WORDS[@]:0:COMP_CWORD}")
	if [[ "$cur" == -* ]]; then
		words+=("$cur")
	fi
	COMPREPLY=($(compgen -W "$("${words[@]}" --generate-bash-completion 2>/dev/null)" -- "$cur"))
}
complete -o default -F _cairn_complete cairn
`

// zshCompletion completes the same way in zsh, natively: it loads zsh's
// completion system when the shell has not (compinit, as a plain
// ~/.zshrc does not), and asks cairn with SHELL set to zsh, so that
// urfave/cli gives each command with its usage for _describe.
const zshCompletion = `# zsh completion for cairn: eval "$(cairn completion zsh)"
(( $+functions[compdef] )) || { autoload -Uz compinit && compinit -i; }
_cairn_complete() {
	local -a args opts
	args=("${(@)words[1,CURRENT-1]}")
	if [[ "${words[CURRENT]}" == -* ]]; then
		args+=("${words[CURRENT]}")
	fi
	opts=("${(@f)$(SHELL=zsh "${args[@]}" --generate-bash-completion 2>/dev/null)}")
	if [[ -n "${opts[1]}" ]]; then
		_describe 'cairn' opts
	else
		_files
	fi
}
compdef _cairn_complete cairn
`

func completionCommand() *cli.Command {
	return &cli.Command{
		Name:      "completion",
		Usage:     "print a shell completion script: eval \"$(cairn completion bash)\" (or zsh)",
		ArgsUsage: "bash|zsh",
		Action: func(c *cli.Context) error {
			if c.NArg() > 1 {
				return withCode(exitUsage, fmt.Errorf("completion takes one shell, and was given %q after it; usage: cairn completion bash|zsh", c.Args().Get(1)))
			}
			switch c.Args().First() {
			case "bash", "":
				_, err := fmt.Fprint(c.App.Writer, bashCompletion)
				return err
			case "zsh":
				_, err := fmt.Fprint(c.App.Writer, zshCompletion)
				return err
			}
			return withCode(exitUsage, errors.New("usage: cairn completion bash|zsh"))
		},
	}
}
