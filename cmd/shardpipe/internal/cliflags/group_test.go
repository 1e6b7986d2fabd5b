package cliflags

import (
	"context"
	"slices"
	"testing"

	"github.com/urfave/cli/v3"
)

// TestThen: the function given to Then runs after the group's own Load,
// sees what it loaded, and the problems it found are kept.
func TestThen(t *testing.T) {
	var n, copied int
	g := Then(NewGroup(func(c *cli.Command, bad *Problems) {
		if n = c.Int("n"); n < 0 {
			bad.Addf("--n %d: must be 0 or more", n)
		}
	}, &cli.IntFlag{Name: "n"}), func() { copied = n })
	for _, tt := range []struct {
		arg  string
		want int
		bad  []string
	}{{"--n=3", 3, nil}, {"--n=-1", -1, []string{"--n -1: must be 0 or more"}}} {
		var bad Problems
		cmd := &cli.Command{Name: "x", Flags: g.Flags, Action: func(_ context.Context, c *cli.Command) error { g.Load(c, &bad); return nil }}
		if err := cmd.Run(context.Background(), []string{"x", tt.arg}); err != nil {
			t.Fatal(err)
		}
		if copied != tt.want || !slices.Equal(bad, tt.bad) {
			t.Errorf("%s: copied %d, problems %q; want %d, %q", tt.arg, copied, bad, tt.want, tt.bad)
		}
	}
}
