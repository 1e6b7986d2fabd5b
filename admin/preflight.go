package admin

import (
	"context"
	"sync"

	"github.com/redis/go-redis/v9"
	"github.com/twmb/franz-go/pkg/kadm"
)

// Preflight runs, concurrently, what a pipeline needs before it starts:
// the brokers answer and every topic exists (CheckTopics), and the ledger's
// Redis answers and can run it (CheckRedis, naming it name; skipped when
// rdb is nil). It returns the problems of each side apart, so that a
// caller can tell Kafka's from Redis's; both nil means ready. opts are
// CheckRedis's (OnWait). It costs the requests of both checks, the time of
// the slower, bounded by ctx.
func Preflight(ctx context.Context, adm *kadm.Client, topics []string, rdb redis.UniversalClient, name string,
	opts ...CheckOpt) (kafka, redis error) {
	var wg sync.WaitGroup
	wg.Go(func() { kafka = CheckTopics(ctx, adm, topics...) })
	if rdb != nil {
		wg.Go(func() { redis = CheckRedis(ctx, rdb, name, opts...) })
	}
	wg.Wait()
	return kafka, redis
}
