package admin_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/shardpipe/shardpipe/admin"
	"github.com/shardpipe/shardpipe/pipeline"
)

// The checks `shardpipe run` makes before it starts, for a program that
// embeds a pipeline: topics, dead-letter topics, the Redis server, topic
// retention against the ledger TTL, and the durability settings, whose
// barrier every commit then waits for.
func Example_preflight() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var (
		adm    *kadm.Client          // kadm.NewClient(kgoClient)
		rdb    redis.UniversalClient // the ledger's Redis
		topics = []string{"orders"}
		ttl    = 7 * 24 * time.Hour
		log    = slog.Default()
	)
	if adm == nil || rdb == nil {
		return // this example has no servers
	}
	if err := errors.Join(admin.CheckTopics(ctx, adm, topics...), admin.CheckDeadLetterTopics(ctx, adm, "", topics),
		admin.CheckRedis(ctx, rdb, "")); err != nil {
		log.Error("cannot start", "err", err) // errors.Is(err, admin.ErrTopicMissing), admin.ErrUnreachable...
		return
	}
	if rs, err := admin.CheckRetention(ctx, adm, ttl, topics...); err == nil {
		for _, r := range rs {
			log.Warn("topic retention is longer than the ledger TTL", "topic", r.Topic, "retention", r.Retention)
		}
	}
	d, err := admin.CheckDurability(ctx, rdb, admin.DurabilityConfig{FenceKey: "shardpipe:fence"})
	for _, r := range d.Risks {
		log.Warn(r.Message, append([]any{"redis", r.Addr}, r.Attrs...)...)
	}
	if errors.Is(err, admin.ErrEviction) || errors.Is(err, admin.ErrNoPersistence) {
		log.Error("the ledger's Redis can lose or re-apply effects", "err", err)
		return
	}
	var opts []pipeline.Option
	if d.Barrier != nil {
		opts = append(opts, pipeline.BeforeCommit(d.Barrier))
	}
	_ = opts // pipeline.New(append(opts, ...)...)
}

// ReadAgain says which records a reset would make the group read a second
// time: those are the ranges to check with an ExpiryCheck first.
func ExampleReadAgain() {
	moves := []admin.Move{
		{Partition: 0, Before: 120, After: 40}, // back: reads 40..120 again
		{Partition: 1, Before: -1, After: 0},   // nothing committed yet
		{Partition: 2, Before: 10, After: 50},  // forward: skips, reads nothing again
	}
	for _, r := range admin.ReadAgain(moves) {
		fmt.Printf("partition %d: %d..%d\n", r.Partition, r.From, r.To)
	}
	// Output: partition 0: 40..120
}
