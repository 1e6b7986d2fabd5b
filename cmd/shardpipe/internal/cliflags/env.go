package cliflags

import (
	"fmt"
	"os"
	"strings"

	"github.com/urfave/cli/v3"
)

// Env is the prefix of the environment variables of a program's flags.
type Env string

// Name is the variable of flag: the prefix and the flag's name in upper
// case with '-' as '_' (SHARDPIPE_ and commit-every: SHARDPIPE_COMMIT_EVERY).
func (e Env) Name(flag string) string {
	return string(e) + strings.ToUpper(strings.ReplaceAll(flag, "-", "_"))
}

// Ref names a flag and its variable for messages: "--ttl (SHARDPIPE_TTL)".
func (e Env) Ref(flag string) string { return "--" + flag + " (" + e.Name(flag) + ")" }

// envVar is a flag's value source: its variable. A value the flag cannot
// parse is kept as a problem line and not used, so that every bad variable
// is reported, not only the first.
type envVar struct {
	flag, key string
	kind      string             // the value's Go type, for messages
	try       func(string) error // parses a value as the flag would, keeping nothing
	problem   string
}

func (v *envVar) Lookup() (string, bool) {
	s, ok := os.LookupEnv(v.key)
	v.problem = ""
	if ok && s != "" {
		if err := v.try(s); err != nil {
			v.problem = fmt.Sprintf("could not parse %q as %s value from environment variable %q for flag %s: %v", s, v.kind, v.key, v.flag, err)
			return "", false
		}
	}
	return s, ok
}

func (v *envVar) IsFromEnv() bool  { return true }
func (v *envVar) Key() string      { return v.key }
func (v *envVar) String() string   { return fmt.Sprintf("environment variable %q", v.key) }
func (v *envVar) GoString() string { return fmt.Sprintf("&envVar{key:%q}", v.key) }

// source makes e.Name(f's name) the only value source of f.
func (e Env) source(f cli.Flag) *envVar {
	switch f := f.(type) {
	case *cli.StringFlag:
		return attach(e, f)
	case *cli.StringSliceFlag:
		return attach(e, f)
	case *cli.IntFlag:
		return attach(e, f)
	case *cli.Uint64Flag:
		return attach(e, f)
	case *cli.FloatFlag:
		return attach(e, f)
	case *cli.BoolFlag:
		return attach(e, f)
	case *cli.DurationFlag:
		return attach(e, f)
	}
	panic(fmt.Sprintf("flag %q: type %T has no environment variable", f.Names()[0], f))
}

func attach[T any, C any, VC cli.ValueCreator[T, C]](e Env, f *cli.FlagBase[T, C, VC]) *envVar {
	v := &envVar{flag: f.Name, key: e.Name(f.Name), kind: fmt.Sprintf("%T", f.Value), try: func(s string) error {
		try := cli.FlagBase[T, C, VC]{Name: f.Name, Value: f.Value, Config: f.Config}
		return try.Set(f.Name, s)
	}}
	f.Sources = cli.NewValueSourceChain(v)
	return v
}
