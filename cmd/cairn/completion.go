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

// zshCompletion loads the bash completion into zsh.
const zshCompletion = "autoload -U +X bashcompinit && bashcompinit\n" + bashCompletion

func completionCommand() *cli.Command {
	return &cli.Command{
		Name:      "completion",
		Usage:     "print a shell completion script: eval \"$(cairn completion bash)\" (or zsh)",
		ArgsUsage: "bash|zsh",
		Action: func(c *cli.Context) error {
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
