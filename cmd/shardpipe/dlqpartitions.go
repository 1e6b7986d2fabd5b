package main

import (
	"context"
	"log/slog"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/shardpipe/shardpipe/admin"
)

// warnDeadLetterPartitions logs one warning per source topic whose
// dead-letter topic has another partition count (admin.CheckDeadLetterPartitions):
// a warning, not a refusal, since exactly once does not depend on it, only
// on the count not changing later. Nothing when pc does not dead-letter; a
// failed check is logged at debug.
func (pc poisonConfig) warnDeadLetterPartitions(ctx context.Context, k kafkaConn, sources []string, timeout time.Duration, log *slog.Logger) {
	if !pc.deadLetter {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var ms []admin.DeadLetterPartitions
	err := k.withAdmin(func(adm *kadm.Client) error {
		var err error
		ms, err = admin.CheckDeadLetterPartitions(ctx, adm, pc.dlqTopic, sources)
		return err
	})
	if err != nil {
		log.Debug("cannot read partition counts; dead-letter topics not compared", "err", err)
		return
	}
	for _, m := range ms {
		log.Warn("dead-letter topic has another partition count than its source: source partition p writes to dead-letter partition p mod N, so dead letters of several source partitions share one (or some stay empty); each is still written once, but do not change the count once dead letters were written, or a record a crash left pending is written a second time",
			"topic", m.Source, "partitions", m.SourcePartitions, "dlq_topic", m.DeadLetter, "dlq_partitions", m.DeadLetterPartitions)
	}
}
