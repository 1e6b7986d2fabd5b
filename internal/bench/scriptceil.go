package bench

import (
	"context"
	"fmt"
	"time"

	"github.com/shardpipe/shardpipe/sink"
)

// runScripted is the scripted sink ceiling: a sink.Ledger with the totals
// effect, as mode e uses it, applying the topic's records (the same keys,
// customers and amounts) in batches of ceilingBatch from ceilingStreams
// streams, with no Kafka: the Ledger sends each batch as one run of its
// batch script, so this is what Redis and the ledger's client do for (e)
// without the consumer, its fetches and its commits. Building the records
// (their JSON values) is part of the time, a few hundred ns per record.
func runScripted(ctx context.Context, spec Spec) (Result, error) {
	rdb, err := NewRedis(spec.Redis)
	if err != nil {
		return Result{}, err
	}
	defer rdb.Close()
	l, err := sink.NewLedger(rdb, sink.WithPrefix(spec.Prefix), sink.WithTTL(spec.TTL), sink.WithEffect(totals(spec.Prefix)))
	if err != nil {
		return Result{}, err
	}
	at := time.Now()
	member := fmt.Sprint(at.UnixNano()) // a term of its own: a run again meets its keys as redelivered
	return inStreams(spec, func(s int) (int64, error) { return scriptStream(ctx, l, spec, s, at, member) })
}

// scriptStream applies records s, s+streams, s+2*streams, ... in batches and
// counts the records applied.
func scriptStream(ctx context.Context, l *sink.Ledger, spec Spec, s int, at time.Time, member string) (int64, error) {
	var applied int64
	batch := make([]sink.Record, 0, ceilingBatch)
	flush := func() error {
		res, err := l.Apply(ctx, batch)
		if err != nil {
			return fmt.Errorf("scripted ceiling: %w", err)
		}
		for _, r := range res {
			if r.Err != nil {
				return fmt.Errorf("scripted ceiling: key %s: %w", r.Key, r.Err)
			}
			if r.Outcome == sink.Applied {
				applied++
			}
		}
		batch = batch[:0]
		return nil
	}
	for i := s; i < spec.Records; i += ceilingStreams {
		batch = append(batch, sink.Record{Topic: "scripted", Partition: int32(s), Offset: int64(i), Epoch: 1,
			Member: member, Group: "scripted", Key: []byte(Key(i)), Value: value(i, at)})
		if len(batch) == ceilingBatch {
			if err := flush(); err != nil {
				return applied, err
			}
		}
	}
	if len(batch) > 0 {
		return applied, flush()
	}
	return applied, nil
}
