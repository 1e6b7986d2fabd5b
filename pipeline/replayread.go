package pipeline

import (
	"context"
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kgo"
)

// client returns a direct-assignment client reading, read_committed, every
// partition not yet fed from its beginning; control records are kept so the
// reader sees every offset up to the end.
func (r *Replay) client() (*kgo.Client, error) {
	offs := make(map[int32]kgo.Offset)
	r.mu.Lock()
	for p, rp := range r.parts {
		if !rp.fed.Load() {
			offs[p] = kgo.NewOffset().At(rp.begin)
		}
	}
	r.mu.Unlock()
	kopts := append(append([]kgo.Opt{kgo.WithLogger(kgoLogger{r.cfg.logger})}, r.cfg.traceHooks()...), r.cfg.kgoOpts...)
	kopts = append(kopts,
		kgo.SeedBrokers(r.cfg.brokers...),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{r.topic: offs}),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.KeepControlRecords(),
	)
	cl, err := kgo.NewClient(kopts...)
	if err != nil {
		return nil, fmt.Errorf("replay %q: kafka client: %w", r.id, err)
	}
	return cl, nil
}

// read polls until every partition has been fed up to its end or ctx ends.
// feed gets each partition's data records below its end, in order; end is
// called once per partition after its last record was fed, and the
// partition's fetching is paused.
func (r *Replay) read(ctx context.Context, feed func(*replayPart, []*kgo.Record) error, end func(*replayPart)) {
	left := 0
	r.mu.Lock()
	for _, rp := range r.parts {
		if !rp.fed.Load() {
			left++
		}
	}
	r.mu.Unlock()
	for left > 0 && ctx.Err() == nil && r.Err() == nil {
		fs := r.cl.PollFetches(ctx) // everything buffered: see Pipeline.Run
		if fs.IsClientClosed() {
			return
		}
		fs.EachError(func(topic string, partition int32, err error) {
			if ferr := fatalFetch(topic, partition, err); ferr != nil {
				r.fail(ferr)
				return
			}
			if !errors.Is(err, context.Canceled) {
				r.cfg.logger.Warn("fetch error", "topic", topic, "partition", partition, "err", err)
			}
		})
		fs.EachPartition(func(ft kgo.FetchTopicPartition) {
			r.mu.Lock()
			rp := r.parts[ft.Partition]
			r.mu.Unlock()
			if rp == nil || rp.fed.Load() || len(ft.Records) == 0 {
				return
			}
			data := ft.Records[:0:0]
			last := int64(-1)
			for _, rec := range ft.Records {
				last = max(last, rec.Offset)
				if rec.Offset < rp.rng.To && rec.Offset >= rp.begin && !rec.Attrs.IsControl() {
					data = append(data, rec)
				}
			}
			if len(data) > 0 {
				if err := feed(rp, data); err != nil {
					r.fail(err)
					return
				}
			}
			if last >= rp.rng.To-1 {
				rp.fed.Store(true)
				r.cl.PauseFetchPartitions(map[string][]int32{r.topic: {ft.Partition}})
				end(rp)
				left--
			}
		})
	}
}
