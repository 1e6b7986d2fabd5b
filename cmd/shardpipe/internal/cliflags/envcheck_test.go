package cliflags

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/urfave/cli/v3"
)

type brokersConfig struct{}

func (*brokersConfig) Groups() []Group {
	return []Group{NewGroup(nil, &cli.StringFlag{Name: "brokers"}, &cli.DurationFlag{Name: "ttl"})}
}

type fromConfig struct{}

func (*fromConfig) Groups() []Group { return []Group{NewGroup(nil, &cli.StringFlag{Name: "from"})} }

// TestCheckEnv: a variable with the prefix that no command reads is one
// problem of the command run, with the closest variable suggested; another
// command's variable, a variable read by name (also) and a variable of
// another prefix are not; a command not made by Command checks nothing.
func TestCheckEnv(t *testing.T) {
	const e Env = "APP_"
	tests := []struct {
		cmd     string
		environ []string
		want    []string // problem lines, each containing
	}{
		{"run", []string{"APP_BROKER=k:1", "APP_TLL=1h", "APP_QQQQQQ=1"}, []string{
			"APP_BROKER is set, but no app command reads it; did you mean APP_BROKERS?",
			"APP_TLL is set, but no app command reads it; did you mean APP_TTL?",
			"APP_QQQQQQ is set, but no app command reads it (a mistyped"}},
		{"run", []string{"APP_FROM=90m", "APP_PASSWORD=x", "OTHER_BROKER=1", "APP_BROKERS=k:1"}, nil},
		{"version", []string{"APP_BROKER=k:1"}, nil},
	}
	for _, tt := range tests {
		root := &cli.Command{Name: "app", Commands: []*cli.Command{
			Command(e, &cli.Command{Name: "run"}, func(context.Context, *cli.Command, *brokersConfig) error { return nil }),
			Command(e, &cli.Command{Name: "replay"}, func(context.Context, *cli.Command, *fromConfig) error { return nil }),
			{Name: "version", Action: func(context.Context, *cli.Command) error { return nil }},
		}}
		CheckEnv(root, []string{"app", tt.cmd}, e, tt.environ, "APP_PASSWORD")
		var got []string
		probs, _ := root.Command(tt.cmd).Metadata[metaProblems].([]flagProblem)
		for _, p := range probs {
			got = append(got, p.line)
		}
		if len(got) != len(tt.want) || !slices.EqualFunc(got, tt.want, strings.Contains) {
			t.Errorf("%s with %q: problems %q, want %q", tt.cmd, tt.environ, got, tt.want)
		}
	}
}
