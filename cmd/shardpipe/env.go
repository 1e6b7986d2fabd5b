package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/urfave/cli/v3"
)

// envName is the environment variable for flag name.
func envName(flag string) string {
	return "SHARDPIPE_" + strings.ToUpper(strings.ReplaceAll(flag, "-", "_"))
}

// flagRef names a flag and its variable for messages: "--ttl (SHARDPIPE_TTL)".
func flagRef(flag string) string { return "--" + flag + " (" + envName(flag) + ")" }

// envVar is a flag's value source: its SHARDPIPE_ variable. A value the
// flag cannot parse is kept as a problem line and not used, so that every
// bad variable is reported, not only the first.
type envVar struct {
	flag, key string
	kind      string             // the value's Go type, for messages
	try       func(string) error // parses a value as the flag would, keeping nothing
	problem   string
}

func (e *envVar) Lookup() (string, bool) {
	v, ok := os.LookupEnv(e.key)
	e.problem = ""
	if ok && v != "" {
		if err := e.try(v); err != nil {
			e.problem = fmt.Sprintf("could not parse %q as %s value from environment variable %q for flag %s: %v", v, e.kind, e.key, e.flag, err)
			return "", false
		}
	}
	return v, ok
}

func (e *envVar) IsFromEnv() bool  { return true }
func (e *envVar) Key() string      { return e.key }
func (e *envVar) String() string   { return fmt.Sprintf("environment variable %q", e.key) }
func (e *envVar) GoString() string { return fmt.Sprintf("&envVar{key:%q}", e.key) }

// withEnv makes envName(f's name) the only value source of f.
func withEnv(f cli.Flag) *envVar {
	switch f := f.(type) {
	case *cli.StringFlag:
		return attachEnv(f)
	case *cli.StringSliceFlag:
		return attachEnv(f)
	case *cli.IntFlag:
		return attachEnv(f)
	case *cli.Uint64Flag:
		return attachEnv(f)
	case *cli.FloatFlag:
		return attachEnv(f)
	case *cli.BoolFlag:
		return attachEnv(f)
	case *cli.DurationFlag:
		return attachEnv(f)
	}
	panic(fmt.Sprintf("flag %q: type %T has no environment variable", f.Names()[0], f))
}

func attachEnv[T any, C any, VC cli.ValueCreator[T, C]](f *cli.FlagBase[T, C, VC]) *envVar {
	e := &envVar{flag: f.Name, key: envName(f.Name), kind: fmt.Sprintf("%T", f.Value), try: func(v string) error {
		try := cli.FlagBase[T, C, VC]{Name: f.Name, Value: f.Value, Config: f.Config}
		return try.Set(f.Name, v)
	}}
	f.Sources = cli.NewValueSourceChain(e)
	return e
}
