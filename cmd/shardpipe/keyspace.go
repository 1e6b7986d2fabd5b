package main

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/redis/go-redis/v9"
	"github.com/urfave/cli/v3"

	"github.com/shardpipe/shardpipe/pipeline"
	"github.com/shardpipe/shardpipe/sink"
)

// fKeySpace names the flag that says whether topics share business keys.
const fKeySpace = "key-space"

// Key spaces: shared (one for every topic, the ledger format before the
// flag existed) or per-topic.
const (
	keySpaceShared   = "shared"
	keySpacePerTopic = "per-topic"
)

func keySpaceFlag() cli.Flag {
	return &cli.StringFlag{Name: fKeySpace, Value: keySpaceShared, Sources: fromEnv(fKeySpace),
		Usage: "shared: one business key space for every topic (ledger key <ledger-prefix><key>), so a key applied from one topic is suppressed in the others, as for re-sends spread over topics; per-topic: each topic's keys apart (<ledger-prefix><topic>:<key>). replay needs the value run used; changing it on an existing ledger applies every retained record again"}
}

func loadKeySpace(c *cli.Command, bad *problems) string {
	s := c.String(fKeySpace)
	if s != keySpaceShared && s != keySpacePerTopic {
		bad.addf("%s %q: want shared or per-topic", flagRef(fKeySpace), s)
	}
	return s
}

// prefixFor returns the ledger key prefix of topic's records.
func (lc ledgerConfig) prefixFor(topic string) string {
	if lc.keySpace == keySpacePerTopic {
		return lc.prefix + topic + ":"
	}
	return lc.prefix
}

// newApplier returns the ledger run applies topics' records through: one
// Ledger for a shared key space, one per topic otherwise.
func newApplier(lc ledgerConfig, topics []string, rdb redis.UniversalClient, log *slog.Logger) (pipeline.Applier, error) {
	log.Info("ledger key space", "key_space", lc.keySpace, "ledger_key", lc.prefixFor("<topic>")+"<business key>")
	if lc.keySpace != keySpacePerTopic {
		return newLedger(lc, "", rdb, log)
	}
	ls := make(topicLedgers, len(topics))
	for _, t := range topics {
		l, err := newLedger(lc, t, rdb, log)
		if err != nil {
			return nil, err
		}
		ls[t] = l
	}
	return ls, nil
}

// topicLedgers applies each batch through its topic's Ledger (or guard
// mode's Guarded, for --effect http). A batch holds one partition's
// records, so one topic's.
type topicLedgers map[string]pipeline.Applier

func (ls topicLedgers) Apply(ctx context.Context, batch []sink.Record) ([]sink.Result, error) {
	if len(batch) == 0 {
		return nil, nil
	}
	l, err := ls.of(batch)
	if err != nil {
		return nil, err
	}
	return l.Apply(ctx, batch)
}

// Finish forwards to the batch's topic's applier when it is a
// pipeline.Finisher (guard mode), so that a worker's unknown batch is
// finished at the end of its term; a Ledger has nothing to finish.
func (ls topicLedgers) Finish(ctx context.Context, batch []sink.Record) (int, int, error) {
	if len(batch) == 0 {
		return 0, 0, nil
	}
	l, err := ls.of(batch)
	if err != nil {
		return 0, 0, err
	}
	if f, ok := l.(pipeline.Finisher); ok {
		return f.Finish(ctx, batch)
	}
	return 0, 0, nil
}

// of returns the applier of batch's topic; a batch holds one topic.
func (ls topicLedgers) of(batch []sink.Record) (pipeline.Applier, error) {
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
