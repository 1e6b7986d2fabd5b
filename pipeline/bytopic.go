package pipeline

import (
	"context"
	"errors"
	"fmt"

	"github.com/shardpipe/shardpipe/sink"
)

// ErrNoKeyer is the error, wrapped, of ByTopic's Key for a record whose
// topic's Applier is no Keyer: the worker then runs that record, when it
// has no record key, on its own, as it would under that Applier alone.
var ErrNoKeyer = errors.New("pipeline: the topic's Applier says no business keys")

// ByTopic applies each batch through the Applier of its records' topic:
// one ledger (or guard) per topic, each with a key prefix of its own, when
// topics hold different things under the same business keys (an order and
// its refund). A batch holds one partition's records, so one topic's; a
// batch of a topic without an Applier, or of several topics, is an error
// and nothing of it is applied. It costs one map lookup per batch; the map
// is copied, and the appliers' capabilities looked up, once, here.
//
// It keeps each topic's capabilities (see Wrap), so a topic's records are
// ordered and finished as under its Applier alone. It is a Keyer when at
// least one of the appliers is: Key goes to the record's topic's Keyer,
// and for a topic whose Applier is none it fails wrapping ErrNoKeyer (the
// worker runs such a record, when it has no record key, on its own). It is
// a Finisher when at least one is: Finish goes to the batch's topic's
// Finisher, and finishes nothing for a topic whose Applier is none. Its
// effects are external when one topic's are. It has no Unwrap (it wraps
// several): its own Key and Finish say what each topic's Applier has.
func ByTopic(appliers map[string]Applier) Applier {
	ls := make(byTopic, len(appliers))
	s := &shell{}
	for t, a := range appliers {
		if a == nil {
			continue // as a topic without one
		}
		ls[t] = a
		if _, ok := keyerOf(a); ok {
			s.key = ls.key
		}
		if _, ok := finisherOf(a); ok {
			s.fin = ls.finish
		}
		s.ext = s.ext || external(a)
	}
	s.apply = ls.apply
	return s.assemble()
}

// byTopic is ByTopic's map, its parts' owner.
type byTopic map[string]Applier

func (ls byTopic) apply(ctx context.Context, batch []sink.Record) ([]sink.Result, error) {
	if len(batch) == 0 {
		return nil, nil
	}
	l, err := ls.of(batch)
	if err != nil {
		return nil, err
	}
	return l.Apply(ctx, batch)
}

func (ls byTopic) finish(ctx context.Context, batch []sink.Record) (int, int, error) {
	if len(batch) == 0 {
		return 0, 0, nil
	}
	l, err := ls.of(batch)
	if err != nil {
		return 0, 0, err
	}
	if f, ok := finisherOf(l); ok {
		return f.Finish(ctx, batch)
	}
	return 0, 0, nil
}

func (ls byTopic) key(r *sink.Record) (string, error) {
	l, ok := ls[r.Topic]
	if !ok {
		return "", fmt.Errorf("ledger: no key space for topic %q", r.Topic)
	}
	k, ok := keyerOf(l)
	if !ok {
		return "", fmt.Errorf("topic %q: %w", r.Topic, ErrNoKeyer)
	}
	return k.Key(r)
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
