package pipeline

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/shardpipe/shardpipe/sink"
)

// Expired is what CheckExpired found in one partition's range: the records
// timestamped before the cutoff, and those of them whose business key the
// ledger lacks, which a replay or a re-read would apply again.
type Expired struct {
	Partition int32 // the partition of the checked topic
	Old       int64 // records timestamped before the cutoff
	Missing   int64 // of those, records whose key the ledger lacks (each key once)
	// First and Last are the offsets of the first and last Missing record;
	// -1 when there is none.
	First, Last int64
}

// CheckExpired reads, by direct assignment with read_committed, the records
// of each range timestamped before cutoff (up to the first offset at or
// after cutoff, by Kafka's offset-by-timestamp lookup) and asks chk (one
// EXISTS per distinct key, MaxBatch keys a round trip) which keys the ledger
// lacks.
//
// It is the risk check of a replay or an offset reset: a ledger entry lives
// for the TTL after the last record that met its key, so a record younger
// than the TTL still has its entry, and an older one may not. Such a record
// whose key is absent would apply again: its entry expired (or was lost).
// A key present now is renewed for the TTL by the record that meets it. A
// key seen earlier in the scan counts once, as a replay would apply it once.
// Reading costs one pass over the old part of the ranges. opts add franz-go
// options (TLS, SASL) to the reading client.
func CheckExpired(ctx context.Context, brokers []string, topic string, ranges []Range, cutoff time.Time,
	chk Checker, maxBatch int, opts ...kgo.Opt) ([]Expired, error) {
	if maxBatch < 1 {
		return nil, errors.New("check expired: maxBatch below 1")
	}
	cl, err := kgo.NewClient(append(opts, kgo.SeedBrokers(brokers...), kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.KeepControlRecords())...)
	if err != nil {
		return nil, fmt.Errorf("check expired: kafka client: %w", err)
	}
	defer cl.Close()
	olds, err := oldParts(ctx, cl, topic, ranges, cutoff)
	if err != nil {
		return nil, err
	}
	out := make([]Expired, len(olds))
	offs := make(map[int32]kgo.Offset)
	idx := make(map[int32]int)
	for i, rg := range olds {
		out[i] = Expired{Partition: rg.Partition, First: -1, Last: -1}
		idx[rg.Partition] = i
		if rg.Len() > 0 {
			offs[rg.Partition] = kgo.NewOffset().At(rg.From)
		}
	}
	if len(offs) == 0 {
		return out, nil
	}
	cl.AddConsumePartitions(map[string]map[int32]kgo.Offset{topic: offs})
	seen := make(map[string]struct{})
	check := func(i int, recs []*kgo.Record) error {
		for len(recs) > 0 {
			n := min(len(recs), maxBatch)
			batch := make([]sink.Record, n)
			for j, rec := range recs[:n] {
				batch[j] = toSink(rec, 0, "", "")
			}
			res, err := chk.Check(ctx, batch)
			if err != nil {
				return fmt.Errorf("check expired: %s/%d offsets %d..%d: %w", topic, olds[i].Partition,
					batch[0].Offset, batch[n-1].Offset, err)
			}
			for j, x := range res {
				if x.Err != nil || x.Outcome != sink.Applied {
					continue
				}
				if _, dup := seen[x.Key]; dup {
					continue
				}
				seen[x.Key] = struct{}{}
				e := &out[i]
				e.Missing++
				if e.First < 0 {
					e.First = batch[j].Offset
				}
				e.Last = batch[j].Offset
			}
			recs = recs[n:]
		}
		return nil
	}
	left := len(offs)
	for left > 0 {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("check expired: %w", err)
		}
		var ferr error
		fs.EachError(func(t string, p int32, err error) {
			if ferr == nil {
				ferr = fmt.Errorf("check expired: fetch %s/%d: %w", t, p, err)
			}
		})
		if ferr != nil {
			return nil, ferr
		}
		var cerr error
		fs.EachPartition(func(ft kgo.FetchTopicPartition) {
			i, ok := idx[ft.Partition]
			if !ok || cerr != nil {
				return
			}
			rg := olds[i]
			var old []*kgo.Record
			done := false
			for _, rec := range ft.Records {
				if rec.Offset >= rg.To-1 {
					done = true // the record at To exists: its timestamp set the cut
				}
				if rec.Offset < rg.From || rec.Offset >= rg.To || rec.Attrs.IsControl() || !rec.Timestamp.Before(cutoff) {
					continue
				}
				out[i].Old++
				old = append(old, rec)
			}
			if cerr = check(i, old); cerr != nil {
				return
			}
			if done {
				cl.PauseFetchPartitions(map[string][]int32{topic: {ft.Partition}})
				delete(idx, ft.Partition)
				left--
			}
		})
		if cerr != nil {
			return nil, cerr
		}
	}
	return out, nil
}

// oldParts cuts each range at the first offset timestamped at or after
// cutoff: the part that may hold records older than it.
func oldParts(ctx context.Context, cl *kgo.Client, topic string, ranges []Range, cutoff time.Time) ([]Range, error) {
	lo, err := listed(kadm.NewClient(cl).ListOffsetsAfterMilli(ctx, cutoff.UnixMilli(), topic))
	if err != nil {
		return nil, fmt.Errorf("check expired: offsets of %s at %s: %w", topic, cutoff.UTC().Format(time.RFC3339), err)
	}
	out := make([]Range, len(ranges))
	for i, r := range ranges {
		out[i] = Range{Partition: r.Partition, From: r.From, To: min(max(lo[topic][r.Partition].Offset, r.From), r.To)}
	}
	return out, nil
}
