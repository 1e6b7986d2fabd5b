package cliflags

import (
	"fmt"
	"slices"
	"strings"

	"github.com/urfave/cli/v3"

	"github.com/shardpipe/shardpipe/internal/typo"
)

// CheckEnv adds a problem to the command args name (args as CheckArgs
// returns them) for each variable of environ ("KEY=value" pairs) named
// with e's prefix that no command of root reads (a flag's variable, in any
// command made by Command) and that is not one of also (variables read by
// name, such as passwords): a mistyped variable (BROKER for BROKERS after
// the prefix) would otherwise be ignored and its flag keep its default. Each line names the variable and the closest known one, if any
// is close. A variable another command reads is not a problem: a shell
// may export the settings of several commands. A command not made by
// Command (version, help) reads no variable and is not checked. It costs
// a pass over environ and the flags of root's commands.
func CheckEnv(root *cli.Command, args []string, e Env, environ []string, also ...string) {
	if len(args) < 2 || strings.HasPrefix(args[1], "-") {
		return
	}
	sub := root.Command(args[1])
	if sub == nil {
		return
	}
	if _, ok := sub.Metadata[metaSources].(map[string]*envVar); !ok {
		return
	}
	known := slices.Clone(also)
	for _, c := range root.Commands {
		if sources, ok := c.Metadata[metaSources].(map[string]*envVar); ok {
			for _, s := range sources {
				known = append(known, s.key)
			}
		}
	}
	var probs []flagProblem
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(name, string(e)) || slices.Contains(known, name) {
			continue
		}
		line := fmt.Sprintf("%s is set, but no %s command reads it", name, root.Name)
		if s := suggestVariable(name, string(e), known); s != "" {
			line += "; did you mean " + s + "?"
		}
		probs = append(probs, flagProblem{line: line + " (a mistyped variable would leave its setting at the default: fix its name, or unset it)"})
	}
	if len(probs) > 0 {
		old, _ := sub.Metadata[metaProblems].([]flagProblem)
		sub.Metadata[metaProblems] = append(probs, old...)
	}
}

// suggestVariable is the known variable closest to name, compared without
// their common prefix (which would make any two look alike).
func suggestVariable(name, prefix string, known []string) string {
	var rest []string
	for _, k := range known {
		if r, ok := strings.CutPrefix(k, prefix); ok {
			rest = append(rest, r)
		}
	}
	if s := typo.Suggest(strings.TrimPrefix(name, prefix), rest); s != "" {
		return prefix + s
	}
	return ""
}
