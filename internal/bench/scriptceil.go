package bench

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/shardpipe/shardpipe/sink"
)

// runScripted is the scripted sink ceiling: a sink.Ledger with the totals
// effect, as mode e uses it, applying the topic's orders (the same keys,
// customers and amounts) in batches of ceilingBatch from ceilingStreams
// streams, with no Kafka: the Ledger sends each batch as one run of its
// batch script, so this is what Redis and the ledger's client do for (e)
// without the consumer, its fetches and its commits. Each record's value
// holds only the two fields the effect reads, written into a buffer the
// stream reuses, so building the batches costs little beside the Ledger.
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
	member := fmt.Sprint(time.Now().UnixNano()) // a term of its own: a run again meets its keys as redelivered
	return inStreams(spec, func(s int) (int64, error) { return scriptStream(ctx, l, spec, s, member) })
}

// scriptStream applies orders s, s+streams, s+2*streams, ... in batches and
// counts the records applied.
func scriptStream(ctx context.Context, l *sink.Ledger, spec Spec, s int, member string) (int64, error) {
	var applied int64
	batch := make([]sink.Record, 0, ceilingBatch)
	var buf []byte
	var bounds []int // per record: key start, value start, value end in buf
	flush := func() error {
		for j := range batch {
			k, v, e := bounds[3*j], bounds[3*j+1], bounds[3*j+2]
			batch[j].Key, batch[j].Value = buf[k:v], buf[v:e]
		}
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
		batch, buf, bounds = batch[:0], buf[:0], bounds[:0]
		return nil
	}
	for i := s; i < spec.Records; i += ceilingStreams {
		k := len(buf)
		buf = appendKey(buf, i)
		v := len(buf)
		buf = append(buf, `{"customer":"cust-`...)
		buf = appendPadded(buf, i%1000, 3)
		buf = append(buf, `","amount_cents":`...)
		buf = strconv.AppendInt(buf, amount(i), 10)
		buf = append(buf, '}')
		bounds = append(bounds, k, v, len(buf))
		batch = append(batch, sink.Record{Topic: "scripted", Partition: int32(s), Offset: int64(i), Epoch: 1,
			Member: member, Group: "scripted"})
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
