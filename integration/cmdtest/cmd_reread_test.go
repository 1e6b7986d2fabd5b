package cmdtest_test

import (
	"context"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/shardpipe/shardpipe/integration"
	"github.com/shardpipe/shardpipe/internal/harness/itest"
	"github.com/shardpipe/shardpipe/sink"
)

// ledgerPastCommit counts, per partition, the ledger claims under prefix that
// name a record at or past the partition's committed offset: records whose
// effects landed after the last commit, which the next owner reads again.
func ledgerPastCommit(ctx context.Context, t *testing.T, rdb redis.UniversalClient, prefix string, committed map[int32]int64) map[int32]int {
	t.Helper()
	past := map[int32]int{}
	it := rdb.Scan(ctx, 0, prefix+"*", 1000).Iterator()
	for it.Next(ctx) {
		v, err := rdb.Get(ctx, it.Val()).Result()
		if err != nil {
			t.Fatalf("GET %s: %v", it.Val(), err)
		}
		c, err := sink.DecodeClaim(v)
		if err != nil {
			t.Fatalf("%s: %v", it.Val(), err)
		}
		if c.Offset >= committed[c.Partition] {
			past[c.Partition]++
		}
	}
	if err := it.Err(); err != nil {
		t.Fatalf("scan %s: %v", prefix, err)
	}
	return past
}

// awaitClientsGone waits until Redis has no connection named name left: a
// killed process's pipelined writes that reached Redis are then applied.
func awaitClientsGone(ctx context.Context, t *testing.T, rdb redis.UniversalClient, name string) {
	t.Helper()
	for {
		list, err := rdb.ClientList(ctx).Result()
		if err != nil {
			t.Fatalf("CLIENT LIST: %v", err)
		}
		if !strings.Contains(list, " name="+name+" ") {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("Redis still serves connections named %s: %v", name, ctx.Err())
		case <-time.After(20 * time.Millisecond): // poll interval: Redis announces no disconnect
		}
	}
}

// TestCmdRereadAfterKill SIGKILLs a real `shardpipe run` mid-way through a
// topic of unique orders and measures what the next owner reads again: per
// partition, the ledger claims (read from Redis) that name records at or past
// the committed offset (read from the broker). It must be at most
// --commit-every, or --max-uncommitted when only the interval trigger is on,
// and the next run must suppress exactly those records.
func TestCmdRereadAfterKill(t *testing.T) {
	t.Parallel()
	brokers, addr := integration.Kafka(t), integration.Redis(t)
	bin := itest.BuildShardpipe(t)
	cases := []struct {
		name  string
		flags []string
		bound int
	}{
		{"commit-every", []string{"--commit-every", "100", "--commit-interval", "1h"}, 100},
		{"max-uncommitted", []string{"--commit-every", "0", "--commit-interval", "1h", "--max-uncommitted", "250",
			"--max-batch", "100"}, 250},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rereadAfterKill(t, bin, brokers, addr, tc.flags, tc.bound)
		})
	}
}

func rereadAfterKill(t *testing.T, bin string, brokers []string, addr string, flags []string, bound int) {
	const (
		partitions = 4
		count      = 20000
	)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	topic := integration.CreateTopic(t, brokers, partitions)
	integration.CreateDeadLetterTopic(t, brokers, topic, partitions)
	rdb := integration.NewRedisClient(t, addr)
	prefix := integration.RedisPrefix(t, rdb)
	group := integration.Group(t)
	b := strings.Join(brokers, ",")
	produce := itest.Start(t, "produce", bin, "produce", "--brokers", b, "--topic", topic, "--count", fmt.Sprint(count),
		"--duplicates", "0", "--seed", "3")
	if code := produce.Wait(ctx); code != 0 {
		t.Fatalf("produce: exit %d\n%s", code, produce.Output())
	}
	runArgs := append([]string{"run", "--brokers", b, "--topic", topic, "--group", group,
		"--redis", "redis://" + addr + "/0?client_name=" + group,
		"--ledger-prefix", prefix, "--report-interval", "100ms", "--session-timeout", "6s", "--log-format", "json"}, flags...)

	run1 := itest.Start(t, "run 1", bin, runArgs...)
	run1.WaitLine(ctx, "progress", func(m map[string]any) bool { return itest.Num(m, "applied") >= count/4 })
	run1.Signal(syscall.SIGKILL)
	run1.Wait(ctx)
	awaitClientsGone(ctx, t, rdb, group) // what it sent before dying has landed

	offs, err := integration.NewAdmin(t, brokers).FetchOffsets(ctx, group)
	if err == nil {
		err = offs.Error()
	}
	if err != nil {
		t.Fatal(err)
	}
	committed := map[int32]int64{}
	for p := range int32(partitions) {
		committed[p] = 0
		if o, ok := offs.Lookup(topic, p); ok {
			committed[p] = max(o.At, 0)
		}
	}
	past := ledgerPastCommit(ctx, t, rdb, prefix, committed)
	total, landed := 0, itest.CountRedisKeys(ctx, t, rdb, prefix+"*")
	for p := range int32(partitions) {
		t.Logf("partition %d: committed %d, landed past it %d (bound %d)", p, committed[p], past[p], bound)
		total += past[p]
		if past[p] > bound {
			t.Errorf("partition %d: %d records landed past the committed offset %d, want at most %d",
				p, past[p], committed[p], bound)
		}
	}
	t.Logf("SIGKILL after %d of %d orders landed: %d to be read again", landed, count, total)
	if landed >= count {
		t.Fatalf("every order had landed before the kill; nothing measured")
	}

	// The next run reads them again: each is suppressed, nothing else is.
	run2 := itest.Start(t, "run 2", bin, append(runArgs, "--commit-interval", "200ms")...) // and commit the tail
	run2.WaitLine(ctx, "progress", func(m map[string]any) bool { return itest.Num(m, "lag") == 0 && m["lag_err"] == nil })
	run2.Signal(syscall.SIGTERM)
	s := run2.WaitLine(ctx, "summary", func(map[string]any) bool { return true })
	if code := run2.Wait(ctx); code != 0 {
		t.Fatalf("run 2: exit %d\n%s", code, run2.Output())
	}
	if sup := itest.Num(s, "suppressed"); sup != int64(total) {
		t.Errorf("run 2 suppressed %d records, want the %d that landed past the commits", sup, total)
	}
	if n := itest.CountRedisKeys(ctx, t, rdb, prefix+"*"); n != count {
		t.Errorf("ledger holds %d keys, want the %d orders", n, count)
	}
}
