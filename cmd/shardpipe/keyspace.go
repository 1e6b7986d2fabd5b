package main

import (
	"log/slog"

	"github.com/redis/go-redis/v9"
	"github.com/urfave/cli/v3"

	"github.com/shardpipe/shardpipe/pipeline"
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
	ls := make(map[string]pipeline.Applier, len(topics))
	for _, t := range topics {
		l, err := newLedger(lc, t, rdb, log)
		if err != nil {
			return nil, err
		}
		ls[t] = l
	}
	return pipeline.ByTopic(ls), nil
}
