package main

import (
	"slices"
	"strings"

	"github.com/shardpipe/shardpipe/secure"
)

// commandLine returns args (program, command, flags, as given) as one
// line for a shell: each flag named in replace gets its value (in the
// form it was given, --name value or --name=value; added at the end,
// sorted, when it was not on the command line: its variable gave it),
// the flags in drop are left out, a URL's password reads xxxxx and a
// value a shell would split is quoted.
func commandLine(args []string, replace map[string]string, drop ...string) string {
	out := []string{"shardpipe"}
	seen := map[string]bool{}
	for i := 1; i < len(args); i++ {
		a := args[i]
		name, val, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
		isFlag := strings.HasPrefix(a, "-") && len(a) > 1
		switch {
		case isFlag && slices.Contains(drop, name): // a bool flag: its value, if any, after '='
		case isFlag && replace[name] != "":
			seen[name] = true
			if hasVal {
				out = append(out, a[:len(a)-len(val)]+shellQuote(replace[name]))
			} else {
				out = append(out, a, shellQuote(replace[name]))
				i++
			}
		case isFlag && hasVal:
			out = append(out, shellQuote(a[:len(a)-len(val)]+secure.RedactURL(val)))
		default:
			out = append(out, shellQuote(secure.RedactURL(a)))
		}
	}
	names := make([]string, 0, len(replace))
	for name := range replace {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		if !seen[name] {
			out = append(out, "--"+name, shellQuote(replace[name]))
		}
	}
	return strings.Join(out, " ")
}

// shellQuote returns s as a POSIX shell reads it back: as it is when it
// holds only safe characters, else in single quotes.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:=@,+%") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
