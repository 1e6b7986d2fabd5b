package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/shardpipe/shardpipe/admin"
	"github.com/shardpipe/shardpipe/pipeline"
)

// ttlRisk is the TTL rule of replay and reset-offsets: a ledger entry lives
// for --ttl after the last record that met its key, so only records
// timestamped more than --ttl ago can have lost theirs, and of those only
// the ones whose key the ledger lacks now would apply again. It counts the
// old records of ranges (cheap: an offset lookup by time); when there are
// any and check is set, it reads them and asks the ledger (EXISTS), and
// returns one line per partition holding records that would apply again
// (admin.ExpiryCheck). With check false (--force) it only logs the old
// records.
type ttlRisk struct {
	kafkaConn
	topic string
	ttl   time.Duration
	now   time.Time
	log   *slog.Logger
	// what says what reads the ranges again, for the lines: "replay" or
	// "the group".
	what string
}

// check applies the rule to ranges: nil when no record would apply again,
// or on a dry run, which logs a warning instead; else a usage error (exit
// 2) with a line per partition and hint. chk is called only when some
// records are older than the TTL; force skips it and only logs them.
func (r ttlRisk) check(ctx context.Context, adm *kadm.Client, ranges []pipeline.Range, force, dryRun bool,
	chk func() (pipeline.Checker, error), hint string) error {
	ec := admin.ExpiryCheck{Brokers: r.brokers, KafkaOpts: r.opts, Topic: r.topic, TTL: r.ttl, Now: r.now}
	if !force {
		ec.Ledger = chk
	}
	e, err := ec.Check(ctx, adm, ranges)
	var ue *admin.UnreachableError
	switch {
	case errors.As(err, &ue) && ue.Request == "ledger check":
		return unavailableErr(fmt.Sprintf("checking the ledger for records older than --ttl %v: %v", r.ttl, ue.Err))
	case errors.As(err, &ue):
		return unavailableErr(err.Error())
	case err != nil:
		return err
	}
	forced := ""
	if force {
		forced = "--force"
	}
	e.Log(r.log, r.topic, r.ttl, forced)
	lines := missingLines(e, r.what, "--ttl "+r.ttl.String())
	switch {
	case len(lines) == 0:
		return nil
	case dryRun:
		r.log.Warn(r.what+" would read again records older than the ledger TTL without ledger entries: they would apply again",
			"ttl", r.ttl, "partitions", strings.Join(lines, "; "))
		return nil
	}
	return usageErr(append(lines, hint)...)
}

// missingLines words, for the command, one line per partition holding old records whose
// keys the ledger lacks, that their effects would apply again: what names
// what reads the ranges again ("the replay", "the group") and ttl the TTL
// as the caller knows it (such as "--ttl 1h0m0s").
func missingLines(e admin.Expiry, what, ttl string) []string {
	var lines []string
	for _, x := range e.Missing() {
		lines = append(lines, fmt.Sprintf("partition %d: %d of the %d records older than %s that %s would read have no ledger entry (first at offset %d, last at %d): their entries may have expired, so their effects would apply again",
			x.Partition, x.Missing, x.Old, ttl, what, x.First, x.Last))
	}
	return lines
}
