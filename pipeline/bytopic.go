package pipeline

import (
	"context"
	"fmt"

	"github.com/shardpipe/shardpipe/sink"
)

// ByTopic applies each batch through the Applier of its records' topic:
// one ledger (or guard) per topic, each with a key prefix of its own, when
// topics hold different things under the same business keys (an order and
// its refund). A batch holds one partition's records, so one topic's; a
// batch of a topic without an Applier, or of several topics, is an error
// and nothing of it is applied. It costs one map lookup per batch. It is
// a Finisher: Finish goes to the batch's topic's Applier when that is one
// (Guarded), and finishes nothing otherwise.
func ByTopic(appliers map[string]Applier) Applier { return byTopic(appliers) }

type byTopic map[string]Applier

func (ls byTopic) Apply(ctx context.Context, batch []sink.Record) ([]sink.Result, error) {
	if len(batch) == 0 {
		return nil, nil
	}
	l, err := ls.of(batch)
	if err != nil {
		return nil, err
	}
	return l.Apply(ctx, batch)
}

func (ls byTopic) Finish(ctx context.Context, batch []sink.Record) (int, int, error) {
	if len(batch) == 0 {
		return 0, 0, nil
	}
	l, err := ls.of(batch)
	if err != nil {
		return 0, 0, err
	}
	return finish(ctx, l, batch)
}

// Key forwards to the record's topic's Applier when it is a Keyer; else
// the record key.
func (ls byTopic) Key(r *sink.Record) (string, error) {
	if k, ok := ls[r.Topic].(Keyer); ok {
		return k.Key(r)
	}
	return string(r.Key), nil
}

// of returns the Applier of batch's topic; a batch holds one topic.
func (ls byTopic) of(batch []sink.Record) (Applier, error) {
	topic := batch[0].Topic
	l, ok := ls[topic]
	if !ok {
		return nil, fmt.Errorf("ledger: no key space for topic %q", topic)
	}
	for i := range batch {
		if batch[i].Topic != topic {
			return nil, fmt.Errorf("ledger: one batch holds topics %q and %q", topic, batch[i].Topic)
		}
	}
	return l, nil
}

// ForTopics returns mk("") when the topics share one key space (perTopic
// false: one Applier for all), else ByTopic over mk(topic) for each topic.
// The first error of mk is returned.
func ForTopics(topics []string, perTopic bool, mk func(topic string) (Applier, error)) (Applier, error) {
	if !perTopic {
		return mk("")
	}
	as := make(map[string]Applier, len(topics))
	for _, t := range topics {
		a, err := mk(t)
		if err != nil {
			return nil, err
		}
		as[t] = a
	}
	return ByTopic(as), nil
}
