// Command shardpipe consumes Kafka topics with effects that land exactly
// once: offsets are committed only after effects land, and a Redis ledger
// keyed by business key suppresses replays.
//
//	shardpipe demo                      # no servers needed: see the guarantees at work
//	shardpipe run --brokers k:9092 --topic orders --redis r:6379 --effect totals
//	shardpipe produce --topic orders --count 10000 --duplicates 0.1 --partitions 4
//	shardpipe status --topic orders --group shardpipe
//	shardpipe version
//
// Every flag can also be set from an environment variable named
// SHARDPIPE_ and the flag's name in upper case with '-' as '_'
// (--commit-every: SHARDPIPE_COMMIT_EVERY). Exit codes: 0 done, 1 failed
// while running, 2 invalid flags or environment, 3 a server is unreachable
// or a topic or group does not exist.
package main

import (
	"context"
	"os"

	"github.com/redis/go-redis/v9"
)

func main() {
	// go-redis logs dial failures on its own; shardpipe reports them once, in its words.
	redis.SetLogger(quietRedis{})
	os.Exit(execute(context.Background(), os.Args, os.Stdout, os.Stderr))
}

// quietRedis drops go-redis's internal log lines.
type quietRedis struct{}

func (quietRedis) Printf(context.Context, string, ...any) {}
