package main

import (
	"context"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// progress is the group's committed total and the topic's end total.
type progress struct{ committed, end int64 }

func (p progress) lag() int64 { return p.end - p.committed }

// groupProgress reads the group's committed offsets and the topic's end offsets.
func groupProgress(ctx context.Context, adm *kadm.Client, group, topic string) (progress, error) {
	ends, err := adm.ListEndOffsets(ctx, topic)
	if err != nil {
		return progress{}, fmt.Errorf("end offsets of %s: %w", topic, err)
	}
	committed, err := adm.FetchOffsets(ctx, group)
	if err != nil {
		return progress{}, fmt.Errorf("committed offsets of group %s: %w", group, err)
	}
	var p progress
	ends.Each(func(o kadm.ListedOffset) {
		p.end += o.Offset
		if c, ok := committed.Lookup(topic, o.Partition); ok && c.At > 0 {
			p.committed += c.At
		}
	})
	return p, nil
}

// awaitProgress polls the group until done says yes, or fails after within.
func awaitProgress(ctx context.Context, adm *kadm.Client, group, topic string, within time.Duration, done func(progress) bool) (progress, error) {
	ctx, cancel := context.WithTimeout(ctx, within)
	defer cancel()
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	var last progress
	for {
		p, err := groupProgress(ctx, adm, group, topic)
		if err == nil {
			if done(p) {
				return p, nil
			}
			last = p
		}
		select {
		case <-ctx.Done():
			return last, fmt.Errorf("group %s on %s after %v: committed %d of %d (last error: %v): %w",
				group, topic, within, last.committed, last.end, err, ctx.Err())
		case <-tick.C:
		}
	}
}

func newAdmin(brokers []string) (*kadm.Client, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...))
	if err != nil {
		return nil, fmt.Errorf("kafka client for %v: %w", brokers, err)
	}
	return kadm.NewClient(cl), nil
}
