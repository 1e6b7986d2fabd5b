package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/shardpipe/shardpipe/admin"
	"github.com/shardpipe/shardpipe/cmd/shardpipe/internal/cliflags"
	"github.com/shardpipe/shardpipe/cmd/shardpipe/internal/settings"
	"github.com/shardpipe/shardpipe/pipeline"
)

// Flag names of poison records that messages name.
const (
	fOnPoison    = settings.FlagOnPoison
	fDLQMaxRun   = settings.FlagDLQMaxRun
	fDLQMaxShare = settings.FlagDLQMaxShare
)

// poisonConfig says what run and replay do with a poison record
// (settings.Poison); dlqPrefix is copied out once loaded.
type poisonConfig struct {
	p         settings.Poison
	dlqPrefix string
}

// poisonGroup is settings.PoisonGroup, loaded into pc.p.
func poisonGroup(pc *poisonConfig, topics func() []string) cliflags.Group {
	return cliflags.Then(settings.PoisonGroup(&pc.p, topics), func() { pc.dlqPrefix = pc.p.Prefix })
}

// options returns the pipeline options for pc; the dead-letter markers live
// in the ledger's Redis, for the ledger's TTL.
func (pc poisonConfig) options(rdb redis.UniversalClient, lc ledgerConfig) []pipeline.Opt {
	return pc.p.Options(rdb, lc.ttl)
}

// checkDeadLetterTopics fails (unavailable, exit 3) naming each missing
// dead-letter topic of sources when pc dead-letters, after creating them
// with --create-dlq-topic.
func (pc poisonConfig) checkDeadLetterTopics(ctx context.Context, k kafkaConn, sources []string, timeout time.Duration, log *slog.Logger) error {
	if !pc.p.DeadLetter {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	return exitFor(k.withAdmin(func(adm *kadm.Client) error {
		created, err := admin.EnsureDeadLetterTopics(ctx, adm, pc.p.Topic, sources, pc.p.CreateDLQ)
		for _, c := range created {
			log.Info("created the missing dead-letter topic (--create-dlq-topic)", "topic", c.Topic,
				"partitions", c.Partitions, "replication_factor", c.Replication, "sources", c.Sources)
		}
		return err
	}), k, timeout)
}

// poisonStorm words a run or replay stopped by a poison storm
// (pipeline.ErrPoisonStorm): the error, then that the configuration is the
// likely cause and what to do; nil for any other error.
func poisonStorm(err error) error {
	if !errors.Is(err, pipeline.ErrPoisonStorm) {
		return nil
	}
	var st *pipeline.PoisonStormError
	switch {
	case errors.As(err, &st) && st.NoSuccess:
		return &exitError{code: exitFailure, lines: []string{err.Error(),
			fmt.Sprintf("no record of the partition succeeded: the configuration, not the data, is the likely cause: check %s and the --effect fields against a record of the topic, and for a refused effect the receiver's URL, path and credentials; nothing of the run was dead-lettered and no offset was committed past its first failure (offset %d of this partition), so a run with the setting fixed reads the records again",
				flagRef(fKeyFrom), st.First)}}
	case st != nil && st.MaxRun > 0 && st.Run > st.MaxRun:
		aside := "nothing of the run was dead-lettered"
		if st.DeadLettered > 0 {
			aside = fmt.Sprintf("%d records of the run were dead-lettered while the partition was idle (they are in the dead-letter topic), none after them", st.DeadLettered)
		}
		return &exitError{code: exitFailure, lines: []string{err.Error(),
			fmt.Sprintf("records of the partition succeeded before the run of failures began: something that changed mid-stream is the likely cause (the receiver's URL, path or credentials, a new kind of record that %s or the --effect fields do not match); %s and no offset was committed past offset %d of this partition, so a run with the cause fixed reads the records from it again (raise %s if the data is really this bad)",
				flagRef(fKeyFrom), aside, st.First, flagRef(fDLQMaxRun))}}
	}
	return &exitError{code: exitFailure, lines: []string{err.Error(),
		fmt.Sprintf("so many dead letters say the configuration, not the data, is the likely cause: check %s and the --effect fields against a record of the topic; the partition stopped before committing past this record; the dead letters before it are in the dead-letter topic (reset-offsets to the offset the line names reads them again once fixed; raise %s if the data is really this bad)",
			flagRef(fKeyFrom), flagRef(fDLQMaxShare))}}
}
