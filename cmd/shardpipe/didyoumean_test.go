package main

import (
	"context"
	"strings"
	"testing"

	"github.com/alicebob/miniredis/v2"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestMissingNamesSuggested: a --topic or --group that does not exist is
// refused (exit 3) naming the closest existing topics or groups, so a typo
// is seen as one.
func TestMissingNamesSuggested(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "orders", "orders-eu", "payments"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	broker, redisAddr := c.ListenAddrs()[0], miniredis.RunT(t).Addr()
	cl, err := kgo.NewClient(kgo.SeedBrokers(broker))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var offs kadm.Offsets
	offs.AddOffset("orders", 0, 1, -1)
	if err := kadm.NewClient(cl).CommitAllOffsets(context.Background(), "shardpipe", offs); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"status group", []string{"status", "--brokers", broker, "--group", "shardpipr"}, `group "shardpipr" does not exist (did you mean "shardpipe"?)`},
		{"status topic", []string{"status", "--brokers", broker, "--group", "shardpipe", "--topic", "ordres"}, `topic "ordres" does not exist (did you mean "orders"?)`},
		{"run topic", []string{"run", "--brokers", broker, "--redis", redisAddr, "--topic", "orders-ue"}, `topic "orders-ue" does not exist (did you mean "orders-eu" or "orders"?)`},
		{"produce topic", []string{"produce", "--brokers", broker, "--topic", "paymets", "--count", "1"}, `topic "paymets" does not exist (did you mean "payments"?)`},
		{"reset-offsets group", []string{"reset-offsets", "--brokers", broker, "--group", "sharpipe", "--topic", "orders", "--to", "earliest"},
			`group "sharpipe" does not exist (did you mean "shardpipe"?)`},
		{"nothing close", []string{"status", "--brokers", broker, "--group", "zzzzzzzz"}, `group "zzzzzzzz" does not exist`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := call(t, nil, tt.args...)
			lines := problemLines(stderr)
			if code != exitUnavailable || len(lines) != 1 || !strings.Contains(lines[0], tt.want) {
				t.Fatalf("exit %d, lines %q; want exit 3 and one line containing %q", code, lines, tt.want)
			}
			if tt.name == "nothing close" && strings.Contains(lines[0], "did you mean") {
				t.Fatalf("line %q suggests a name far from the one given", lines[0])
			}
		})
	}
}
