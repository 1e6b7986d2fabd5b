package bench

import (
	"context"
	"fmt"
	"strconv"

	"github.com/shardpipe/shardpipe/sink"
)

// runScripted is a ledger ceiling: a sink.Ledger as the pipeline uses it,
// applying the topic's orders (the same keys, customers and amounts) in
// batches of ceilingBatch from ceilingStreams streams, with no Kafka. The
// Ledger sends each batch as one run of its batch script, so this is what
// Redis and the ledger's client do without the consumer, its fetches and
// its commits: with the totals effect for the scripted ceiling (j) of mode
// e, in record mode for the ledger ceiling (k) of mode d. Each record's
// value holds only the two fields the effect reads, written into a buffer
// the stream reuses, so building the batches costs little beside the
// Ledger.
func runScripted(ctx context.Context, spec Spec) (Result, error) {
	rdb, err := NewRedis(spec.Redis)
	if err != nil {
		return Result{}, err
	}
	defer rdb.Close()
	opts, of := []sink.LedgerOpt{sink.WithPrefix(spec.Prefix), sink.WithTTL(spec.TTL)}, Shardpipe
	if spec.Mode == Scripted {
		opts, of = append(opts, sink.WithEffect(totals(spec.Prefix))), Totals
	}
	l, err := sink.NewLedger(rdb, opts...)
	if err != nil {
		return Result{}, err
	}
	// A term of its own, with claims of the size the mode it bounds (of)
	// writes: the topic, the group that mode of the round consumes it in
	// and a member ID of the broker's shape. A run again meets its keys as
	// redelivered.
	term := sink.Record{Topic: spec.Topic, Epoch: 1, Member: kgoMember(), Group: roundGroup(spec, of)}
	return inStreams(spec, func(s int) (int64, error) { return scriptStream(ctx, l, spec, s, term) })
}

// scriptStream applies orders s, s+streams, s+2*streams, ... in batches, as
// records of term in partition s, and counts the records applied.
func scriptStream(ctx context.Context, l *sink.Ledger, spec Spec, s int, term sink.Record) (int64, error) {
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
		r := term // stream s is a partition: its records' offsets count from 0
		r.Partition, r.Offset = int32(s), int64(i/ceilingStreams)
		batch = append(batch, r)
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
