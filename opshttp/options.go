package opshttp

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// Opt configures New.
type Opt interface{ apply(*Probe) }

type opt func(*Probe)

func (o opt) apply(p *Probe) { o(p) }

// Redis makes readiness check that Redis takes writes: each Ready sets key
// (its value the time) to expire after ten seconds, within two seconds.
// Default: no Redis check. key should be one of shardpipe's own keys,
// outside the ledger's prefix.
func Redis(rdb redis.UniversalClient, key string) Opt {
	return opt(func(p *Probe) { p.rdb, p.redisKey = rdb, key })
}

// RedisInterval is how long a readiness probe's Redis result is kept:
// probes within d of the last write answer its result, and probes that
// arrive while a write is in flight wait for it, so Redis gets at most one
// SET per d however often readiness is asked. Default: DefaultRedisInterval.
func RedisInterval(d time.Duration) Opt { return opt(func(p *Probe) { p.redisEvery = d }) }

// Dependency makes readiness check another server the pipeline's effects
// need (a database, a receiver): a check called name that passes when ping
// returns nil within two seconds. Like Redis's write, a ping is shared by
// the probes of one RedisInterval, so a flood of probes costs the server
// one ping per interval. desc names the server in the check's detail and
// must hold no secret. Default: none.
func Dependency(name, desc string, ping func(context.Context) error) Opt {
	return opt(func(p *Probe) {
		run := func(ctx context.Context) Check {
			ctx, cancel := context.WithTimeout(ctx, p.redisTimeout)
			defer cancel()
			start := p.now()
			if err := ping(ctx); err != nil {
				return Check{Name: name, Detail: fmt.Sprintf("%s did not answer: %v", desc, err)}
			}
			return Check{Name: name, OK: true, Detail: fmt.Sprintf("%s answered in %s", desc, p.now().Sub(start).Round(time.Microsecond))}
		}
		p.deps = append(p.deps, &healthCache{name: name, what: "ping " + desc, run: run})
	})
}

// DefaultRedisInterval is RedisInterval's default.
const DefaultRedisInterval = time.Second

// Group names the consumer group on the status page. Default: none.
func Group(name string) Opt { return opt(func(p *Probe) { p.group = name }) }

// WedgedAfter is how long one Redis or Kafka call of a partition's worker
// may be in flight before liveness fails (pipeline.PartitionStats.BusySince).
// Default: two minutes, far above the clients' own timeouts, so only a
// call that will never return trips it.
func WedgedAfter(d time.Duration) Opt { return opt(func(p *Probe) { p.wedged = d }) }

// FailingCommits is how many commits of a partition may fail in a row
// before readiness fails: the partition soon stops fetching. Default: 3.
func FailingCommits(n int64) Opt { return opt(func(p *Probe) { p.failing = n }) }
