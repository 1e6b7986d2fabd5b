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
// record of 4 partitions poison; run stops with exit 1 when the records
// failed over the process exceed --dlq-max-run, says the configuration is
// the likely cause, dead-letters nothing and commits nothing.
func TestRunPoisonStorm(t *testing.T) {
	broker, redisAddr, _ := fakes(t)
	if code, _, stderr := call(t, nil, "produce", "--brokers", broker, "--topic", "orders", "--partitions", "4", "--count", "200"); code != 0 {
		t.Fatalf("produce: exit %d: %s", code, stderr)
	}
	code, _, stderr := call(t, nil, "run", "--brokers", broker, "--redis", redisAddr, "--topic", "orders",
		"--key-from", "json:missing_field", "--poison-attempts", "1", "--commit-every", "1", "--report-interval", "0",
		"--dlq-max-run", "20")
	lines := strings.Join(problemLines(stderr), "\n")
	if code != exitFailure || !strings.Contains(lines, "records failed for good with no success since over the pipeline's partitions, bound 20") ||
		!strings.Contains(lines, "the configuration, not the data, is the likely cause") || !strings.Contains(lines, "nothing of the run was dead-lettered") || !strings.Contains(lines, "--key-from") {
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
	offs.Each(func(o kadm.OffsetResponse) {
		if o.At > 0 {
			t.Errorf("orders/%d committed at %d after the storm, want nothing committed", o.Partition, o.At)
		}
	})
	ends, err := adm.ListEndOffsets(ctx, "orders.dlq")
	if err != nil {
		t.Fatal(err)
	}
	ends.Each(func(o kadm.ListedOffset) {
		if o.Offset != 0 {
			t.Errorf("orders.dlq/%d holds %d records, want none", o.Partition, o.Offset)
		}
	})
}
