package scenario

import (
	"context"
	"fmt"
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
// that went backwards between two polls. It counts its polls too: one that
// never read the topic's offsets (a client that could not start, every
// fetch failing) would report no decrease having checked nothing, so stop
// fails then.
type monitor struct {
	cancel    context.CancelFunc
	wg        sync.WaitGroup
	decreases int
	seen      int   // polls that read a committed offset of the topic
	failed    int   // polls the broker did not answer, or answered with an error
	lastErr   error // the last failed poll's error, or the client's
	once      sync.Once
	err       error
}

func startMonitor(env runEnv) *monitor {
	ctx, cancel := context.WithCancel(context.Background())
	m := &monitor{cancel: cancel}
	cl, err := kgo.NewClient(append(append([]kgo.Opt{}, env.kopts...), kgo.SeedBrokers(env.Brokers...))...)
	if err != nil {
		m.lastErr = err
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
				err = offs.Error()
			}
			switch {
			case ctx.Err() != nil: // stopping: not a failed poll
			case err != nil:
				m.failed++
				m.lastErr = err
			default:
				seen := false
				offs.Each(func(o kadm.OffsetResponse) {
					if o.Topic != env.Topic || o.Err != nil || o.At < 0 {
						return
					}
					seen = true
					if o.At < high[o.Partition] {
						m.decreases++
					} else {
						high[o.Partition] = o.At
					}
				})
				if seen {
					m.seen++
				}
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

// stop ends the polling; it fails when no poll read the topic's committed
// offsets (then "no decrease" proves nothing).
func (m *monitor) stop() error {
	m.once.Do(func() {
		m.cancel()
		m.wg.Wait()
		if m.seen == 0 {
			m.err = fmt.Errorf("offset monitor: no poll read the group's committed offsets (%d failed, last error %v)", m.failed, m.lastErr)
		}
	})
	return m.err
}
