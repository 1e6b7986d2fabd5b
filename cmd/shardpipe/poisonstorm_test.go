package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestRunPoisonStorm: one typo (--key-from json:missing_field) makes every
// record poison; run stops with exit 1 at --dlq-max-run instead of
// dead-lettering the topic, says the configuration is the likely cause, and
// commits nothing past the record that exceeded the bound (offset 20).
func TestRunPoisonStorm(t *testing.T) {
	broker, redisAddr, _ := fakes(t)
	if code, _, stderr := call(t, nil, "produce", "--brokers", broker, "--topic", "orders", "--partitions", "1", "--count", "200"); code != 0 {
		t.Fatalf("produce: exit %d: %s", code, stderr)
	}
	code, _, stderr := call(t, nil, "run", "--brokers", broker, "--redis", redisAddr, "--topic", "orders",
		"--key-from", "json:missing_field", "--poison-attempts", "1", "--commit-every", "1", "--report-interval", "0",
		"--dlq-max-run", "20")
	lines := strings.Join(problemLines(stderr), "\n")
	if code != exitFailure || !strings.Contains(lines, "21 poison records in a row from offset 0, bound 20") ||
		!strings.Contains(lines, "the configuration, not the data, is the likely cause") || !strings.Contains(lines, "--key-from") {
		t.Fatalf("exit %d, want 1 naming the bound and the configuration as the likely cause:\n%s", code, stderr)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(broker))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	adm := kadm.NewClient(cl)
	offs, err := adm.FetchOffsets(ctx, "shardpipe")
	if err != nil {
		t.Fatal(err)
	}
	if o, ok := offs.Lookup("orders", 0); ok && o.At > 20 {
		t.Fatalf("committed offset %d after the storm, want none past 20", o.At)
	}
	ends, err := adm.ListEndOffsets(ctx, "orders.dlq")
	if err != nil {
		t.Fatal(err)
	}
	if end, _ := ends.Lookup("orders.dlq", 0); end.Offset != 20 {
		t.Fatalf("orders.dlq holds %d records, want the 20 within the bound", end.Offset)
	}
}
