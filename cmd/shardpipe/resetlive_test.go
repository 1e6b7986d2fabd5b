package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestResetDryRunWhileLive: a dry run of reset-offsets plans the move of a
// group that has members, saying the group is live; the real run is still
// refused (exit 1) and moves nothing.
func TestResetDryRunWhileLive(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "orders"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	broker := c.ListenAddrs()[0]
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	prod, err := kgo.NewClient(kgo.SeedBrokers(broker))
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()
	for range 5 {
		if err := prod.ProduceSync(ctx, &kgo.Record{Topic: "orders", Value: []byte("{}")}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	var offs kadm.Offsets
	offs.AddOffset("orders", 0, 5, -1)
	if err := kadm.NewClient(prod).CommitAllOffsets(ctx, "g", offs); err != nil {
		t.Fatal(err)
	}
	joined := make(chan struct{})
	member, err := kgo.NewClient(kgo.SeedBrokers(broker), kgo.ConsumerGroup("g"), kgo.ConsumeTopics("orders"),
		kgo.OnPartitionsAssigned(func(context.Context, *kgo.Client, map[string][]int32) { close(joined) }))
	if err != nil {
		t.Fatal(err)
	}
	defer member.Close()
	go func() {
		for ctx.Err() == nil && !member.PollFetches(ctx).IsClientClosed() {
		}
	}()
	select {
	case <-joined:
	case <-ctx.Done():
		t.Fatal("the member never joined")
	}
	args := []string{"reset-offsets", "--brokers", broker, "--group", "g", "--topic", "orders", "--to", "earliest"}
	code, out, stderr := call(t, nil, append(args, "--dry-run")...)
	if code != exitOK || !strings.Contains(out, `group "g" is live`) || !strings.Contains(out, "nothing committed") {
		t.Fatalf("dry run of a live group: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, stderr)
	}
	if !strings.Contains(out, "0       5      0") {
		t.Errorf("dry run: want partition 0 from 5 to 0:\n%s", out)
	}
	code, _, stderr = call(t, nil, args...)
	if code != exitFailure || !strings.Contains(stderr, "active member") {
		t.Fatalf("real run of a live group: exit %d, want 1 naming the active member:\n%s", code, stderr)
	}
}
