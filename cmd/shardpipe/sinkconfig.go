package main

import (
	"context"
	"log/slog"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/shardpipe/shardpipe/admin"
	"github.com/shardpipe/shardpipe/cmd/shardpipe/internal/cliflags"
	"github.com/shardpipe/shardpipe/cmd/shardpipe/internal/settings"
	"github.com/shardpipe/shardpipe/pipeline"
	"github.com/shardpipe/shardpipe/sink"
)

// sinkConfig is what run and replay share: the ledger and its Redis, what
// the Redis must promise, the commit policy, poison records, the connect
// timeout and the logs.
type sinkConfig struct {
	ledgerConfig
	durability admin.DurabilityConfig
	commitConfig
	poisonConfig
	connectTimeout time.Duration
	log            logConfig
}

// groups are the shared groups before a command's own; topics returns the
// consumed topics, once loaded.
func (sc *sinkConfig) groups(topics func() []string) []cliflags.Group {
	return append(ledgerGroups(&sc.ledgerConfig), settings.DurabilityGroup(&sc.durability), commitGroup(&sc.commitConfig),
		poisonGroup(&sc.poisonConfig, topics))
}

// keys are the Redis keys run and replay write that sc's settings name:
// the ledger's and those under --dlq-prefix, its manifest among them
// (settings.KeysGroup keeps them apart with a command's own).
func (sc *sinkConfig) keys() []settings.OwnedKey {
	return append(sc.l.Keys(), sc.p.OwnKeys(sc.l.Spec.Prefix)...)
}

// tail are the shared groups after a command's own; reports says what
// --report-interval times, and own are the keys the command writes besides
// sc.keys, once loaded.
func (sc *sinkConfig) tail(reports string, own func() []settings.OwnedKey) []cliflags.Group {
	return []cliflags.Group{connectGroup(&sc.connectTimeout, waitBrokersRedis), logGroup(&sc.log, reports),
		settings.KeysGroup(func() []settings.OwnedKey { return append(sc.keys(), own()...) })}
}

// start warns about settings that weaken security (warnWeakSecurity),
// then runs the checks before the pipeline starts, each within
// --connect-timeout: the brokers, acc's topics and Redis answer
// (preflight), acc's principals may read the topics, describe acc's group
// and reach acc's and the ledger's keys (admin.CheckAccess), with checkDLQ
// the dead-letter topics exist (and a partition count other than the
// source's is warned about), and the Redis keeps what the ledger needs
// (redisDurability, whose barrier it returns).
func (sc *sinkConfig) start(ctx context.Context, k kafkaConn, acc admin.Access, rdb redis.UniversalClient, checkDLQ bool,
	log *slog.Logger) (pipeline.Barrier, error) {
	warnWeakSecurity(log, k, sc.redis)
	topics := acc.Topics
	if err := preflight(ctx, k, topics, rdb, sc.redis.Desc, sc.connectTimeout, log); err != nil {
		return nil, err
	}
	// The ledger's manifest is among the keys the access check asks for.
	acc.Keys = append(acc.Keys, sink.ManifestKey(sc.p.Prefix, sc.l.Spec.Prefix))
	if acc.Keys = append(acc.Keys, sc.l.Spec.Prefix+"preflight-probe"); sc.l.Spec.Totals != nil {
		acc.Keys = append(acc.Keys, sc.l.Spec.Totals.Hash)
	}
	cl, err := k.adminClient()
	if err != nil {
		return nil, failure(err)
	}
	defer cl.Close()
	actx, cancel := context.WithTimeout(ctx, sc.connectTimeout)
	defer cancel()
	if err := admin.CheckAccess(actx, cl, acc, rdb, sc.redis.Desc); err != nil {
		return nil, exitFor(err, k, sc.connectTimeout)
	}
	// A totals hash the manifest gives (not given here) was not asked for
	// above; its first write says so if the ACL lacks it.
	writeManifest, err := sc.checkManifest(ctx, rdb, topics, checkDLQ, log) // manifest.go
	if err != nil {
		return nil, err
	}
	if checkDLQ {
		if err := sc.checkDeadLetterTopics(ctx, k, topics, sc.connectTimeout, log); err != nil {
			return nil, err
		}
		sc.warnDeadLetterPartitions(ctx, k, topics, sc.connectTimeout, log)
	}
	if err := writeManifest(); err != nil {
		return nil, err
	}
	sc.durability.Name, sc.durability.FenceKey = sc.redis.Desc, settings.FenceKey(sc.dlqPrefix)
	return redisDurability(ctx, rdb, sc.durability, sc.connectTimeout, log)
}
