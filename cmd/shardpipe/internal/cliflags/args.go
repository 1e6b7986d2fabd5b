package cliflags

import (
	"fmt"
	"slices"
	"strings"
	"unicode"

	"github.com/urfave/cli/v3"

	"github.com/shardpipe/shardpipe/internal/typo"
)

// CheckArgs checks args (program, command, flags...) before root parses
// them, which stops at the first problem. A command that does not exist is
// a *UsageError of its own, with a "did you mean". For a command made by
// Command, each unknown flag (with a "did you mean") and each value its
// flag cannot parse is one problem, which the command reports with the
// others, and is dropped from the args returned, so the rest still parse.
func CheckArgs(root *cli.Command, args []string) ([]string, error) {
	if len(args) < 2 || strings.HasPrefix(args[1], "-") {
		return args, nil
	}
	sub := root.Command(args[1])
	if sub == nil {
		var names []string
		for _, c := range root.VisibleCommands() {
			names = append(names, c.Name)
		}
		line := fmt.Sprintf("unknown command %q: want %s", args[1], strings.Join(names, ", "))
		if s := typo.Suggest(args[1], names); s != "" {
			line = fmt.Sprintf("unknown command %q; did you mean %s?", args[1], s)
		}
		return nil, &UsageError{Lines: []string{line}}
	}
	sources, ok := sub.Metadata[metaSources].(map[string]*envVar)
	if !ok {
		return args, nil
	}
	names := []string{"help", "h"}
	for _, f := range sub.Flags {
		names = append(names, f.Names()...)
	}
	out, probs := args[:2:2], []flagProblem(nil)
	for rest := args[2:]; len(rest) > 0; rest = rest[1:] {
		a := strings.TrimSpace(rest[0])
		if a == "--" {
			out = append(out, rest...)
			break
		}
		if len(a) < 2 || a[0] != '-' || !unicode.IsLetter([]rune(strings.TrimLeft(a, "-") + " ")[0]) {
			out = append(out, rest[0]) // an argument, as the library reads it
			continue
		}
		name, val, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
		i := slices.IndexFunc(sub.Flags, func(f cli.Flag) bool { return slices.Contains(f.Names(), name) })
		if i < 0 && !slices.Contains(names, name) {
			line := "flag provided but not defined: -" + name
			if s := typo.Suggest(name, names); s != "" {
				line += "; did you mean --" + s + "?"
			}
			probs = append(probs, flagProblem{line: line})
			if !hasVal && len(rest) > 1 && !strings.HasPrefix(rest[1], "-") {
				rest = rest[1:] // its value, most likely
			}
			continue
		}
		if _, isBool := sub.Flags[max(i, 0)].(*cli.BoolFlag); i < 0 || isBool && !hasVal {
			out = append(out, rest[0]) // --help, or a bool flag without a value
			continue
		}
		f := sub.Flags[i]
		arg := []string{rest[0]}
		if !hasVal {
			if len(rest) == 1 {
				probs = append(probs, flagProblem{flag: name, line: "flag needs an argument: -" + name})
				continue
			}
			val, rest = rest[1], rest[1:]
			arg = append(arg, val)
		}
		if err := sources[f.Names()[0]].try(val); err != nil {
			probs = append(probs, flagProblem{flag: f.Names()[0], line: fmt.Sprintf("invalid value %q for flag -%s: %v", val, name, err)})
			continue
		}
		out = append(out, arg...)
	}
	if len(probs) > 0 {
		sub.Metadata[metaProblems] = probs
	}
	sub.Metadata[metaArgs] = out
	return out, nil
}

// GivenArgs returns the command line of c, a command made by Command, as
// CheckArgs passed it on (program, command, flags: the unusable ones
// dropped); nil when CheckArgs did not check it. For a command to print a
// line that runs it again, changed.
func GivenArgs(c *cli.Command) []string {
	args, _ := c.Metadata[metaArgs].([]string)
	return args
}
