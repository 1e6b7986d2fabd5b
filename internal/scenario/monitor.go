package scenario

import (
	"context"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/shardpipe/shardpipe/checkpoint"
	"github.com/shardpipe/shardpipe/internal/watch"
	"github.com/shardpipe/shardpipe/pipeline"
)

// eventDecreases counts commits, in the order they were acknowledged, that
// went below an earlier commit of the same partition.
func eventDecreases(evs []watch.Tagged) int {
	high := map[checkpoint.Partition]int64{}
	n := 0
	for _, e := range evs {
		if e.Kind != pipeline.Committed {
			continue
		}
		if e.Offset < high[e.Partition] {
			n++
		} else {
			high[e.Partition] = e.Offset
		}
	}
	return n
}

// monitor polls the group's committed offsets from the broker and counts any
// that went backwards between two polls.
type monitor struct {
	cancel    context.CancelFunc
	wg        sync.WaitGroup
	decreases int
	once      sync.Once
}

func startMonitor(env Env) *monitor {
	ctx, cancel := context.WithCancel(context.Background())
	m := &monitor{cancel: cancel}
	cl, err := kgo.NewClient(kgo.SeedBrokers(env.Brokers...))
	if err != nil {
		cancel()
		return m
	}
	adm := kadm.NewClient(cl)
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		defer cl.Close()
		high := map[int32]int64{}
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			offs, err := adm.FetchOffsets(ctx, env.Group)
			if err == nil {
				offs.Each(func(o kadm.OffsetResponse) {
					if o.Topic != env.Topic || o.Err != nil {
						return
					}
					if o.At < high[o.Partition] {
						m.decreases++
					} else {
						high[o.Partition] = o.At
					}
				})
			}
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	return m
}

func (m *monitor) stop() {
	m.once.Do(func() {
		m.cancel()
		m.wg.Wait()
	})
}
