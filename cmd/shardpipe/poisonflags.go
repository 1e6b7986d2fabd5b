package main

import (
	"context"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/urfave/cli/v3"

	"github.com/shardpipe/shardpipe/admin"
	"github.com/shardpipe/shardpipe/pipeline"
)

// poisonConfig says what run and replay do with a poison record (no usable
// key, a value the effect cannot read) once its attempts are spent.
type poisonConfig struct {
	deadLetter     bool   // --on-poison dlq
	dlqTopic       string // "": <topic>.dlq
	dlqPrefix      string // the dead-letter markers' key prefix
	poisonAttempts int
}

// poisonFlags are the poison-record flags run and replay share.
func poisonFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: fOnPoison, Value: "dlq", Sources: fromEnv(fOnPoison),
			Usage: "a poison record (no usable key, a value the effect cannot read), once its attempts are spent: dlq (write it to the dead-letter topic, once, then commit past it) or stop (exit 1, offset stays before it)"},
		&cli.StringFlag{Name: fDLQTopic, Sources: fromEnv(fDLQTopic),
			Usage: "dead-letter topic for every consumed topic (empty: <topic>.dlq for each); it must exist (run: unless --create-dlq-topic creates it)"},
		&cli.IntFlag{Name: fPoisonAttempts, Value: 3, Sources: fromEnv(fPoisonAttempts),
			Usage: "attempts in all for a poison record, with backoff from 100ms to 2s between them, before --on-poison applies"},
		&cli.StringFlag{Name: fDLQPrefix, Value: "shardpipe:", Sources: fromEnv(fDLQPrefix),
			Usage: "prefix of shardpipe's own Redis keys besides the ledger: the markers that keep each dead letter written once (prefix + dlq:topic:partition:offset), the key written before each durability wait (prefix + fence) and the one each readiness probe writes (prefix + health); they must not overlap --ledger-prefix, so no business key can name one"},
	}
}

// loadPoisonConfig reads the poison flags; topics are the consumed topics,
// which the dead-letter topic must not be.
func loadPoisonConfig(c *cli.Command, bad *problems, topics []string, ledgerPrefix string) poisonConfig {
	var pc poisonConfig
	pc.dlqPrefix = c.String(fDLQPrefix)
	switch {
	case pc.dlqPrefix == "":
		bad.addf("%s: empty; dead-letter markers need a prefix of their own", flagRef(fDLQPrefix))
	case ledgerPrefix != "" && overlap(pc.dlqPrefix+"dlq:", ledgerPrefix):
		bad.addf("%s %q: its markers (%sdlq:...) overlap %s %q, so a business key could name a marker; give them distinct prefixes",
			flagRef(fDLQPrefix), pc.dlqPrefix, pc.dlqPrefix, flagRef(fLedgerPrefix), ledgerPrefix)
	case ledgerPrefix != "" && overlap(fenceKey(pc.dlqPrefix), ledgerPrefix):
		bad.addf("%s %q: its durability fence key %s overlaps %s %q, so a business key could name it; give them distinct prefixes",
			flagRef(fDLQPrefix), pc.dlqPrefix, fenceKey(pc.dlqPrefix), flagRef(fLedgerPrefix), ledgerPrefix)
	case ledgerPrefix != "" && overlap(healthKey(pc.dlqPrefix), ledgerPrefix):
		bad.addf("%s %q: the readiness probe's key %s overlaps %s %q, so a business key could name it; give them distinct prefixes",
			flagRef(fDLQPrefix), pc.dlqPrefix, healthKey(pc.dlqPrefix), flagRef(fLedgerPrefix), ledgerPrefix)
	}
	switch s := c.String(fOnPoison); s {
	case "dlq":
		pc.deadLetter = true
	case "stop":
	default:
		bad.addf("%s %q: want dlq or stop", flagRef(fOnPoison), s)
	}
	if pc.dlqTopic = strings.TrimSpace(c.String(fDLQTopic)); pc.dlqTopic != "" {
		if msg := topicProblem(pc.dlqTopic); msg != "" {
			bad.addf("%s %q: %s", flagRef(fDLQTopic), pc.dlqTopic, msg)
		}
		for _, t := range topics {
			if t == pc.dlqTopic {
				bad.addf("%s %q: also consumed (%s); dead letters would be read back as input", flagRef(fDLQTopic), t, flagRef(fTopic))
			}
		}
	}
	pc.poisonAttempts = int(c.Int(fPoisonAttempts))
	if pc.poisonAttempts < 1 || pc.poisonAttempts > 100 {
		bad.addf("%s %d: want 1 to 100", flagRef(fPoisonAttempts), pc.poisonAttempts)
	}
	return pc
}

// options returns the pipeline options for pc; the dead-letter markers live
// in the ledger's Redis, for the ledger's TTL.
func (pc poisonConfig) options(rdb redis.UniversalClient, lc ledgerConfig) []pipeline.Opt {
	opts := []pipeline.Opt{pipeline.PoisonAttempts(pc.poisonAttempts)}
	if pc.deadLetter {
		opts = append(opts, pipeline.DeadLetters(rdb, pc.dlqPrefix, pipeline.DeadLetterTo(pc.dlqTopic),
			pipeline.DeadLetterTTL(lc.ttl)))
	}
	return opts
}

// checkDeadLetterTopics fails (unavailable, exit 3) naming each missing
// dead-letter topic of sources when pc dead-letters.
func (pc poisonConfig) checkDeadLetterTopics(ctx context.Context, brokers, sources []string, timeout time.Duration) error {
	if !pc.deadLetter {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	return exitFor(withAdmin(brokers, func(adm *kadm.Client) error {
		return admin.CheckDeadLetterTopics(ctx, adm, pc.dlqTopic, sources)
	}), brokers, timeout)
}

// overlap reports whether one key namespace holds the other.
func overlap(a, b string) bool { return strings.HasPrefix(a, b) || strings.HasPrefix(b, a) }
