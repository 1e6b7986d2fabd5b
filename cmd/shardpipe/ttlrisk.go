package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

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
	brokers []string
	// kafkaOpts are the TLS and SASL options of the reading client.
	kafkaOpts []kgo.Opt
	topic     string
	ttl       time.Duration
	now       time.Time
	log       *slog.Logger
	// what says what reads the ranges again, for the lines: "replay" or
	// "the group".
	what string
}

// lines returns the refusal lines, nil when nothing would apply again.
// chk is called only when some records are older than the TTL.
func (r ttlRisk) lines(ctx context.Context, adm *kadm.Client, ranges []pipeline.Range, check bool,
	chk func() (pipeline.Checker, error)) ([]string, error) {
	ec := admin.ExpiryCheck{Brokers: r.brokers, KafkaOpts: r.kafkaOpts, Topic: r.topic, TTL: r.ttl, Now: r.now}
	if check {
		ec.Ledger = chk
	}
	e, err := ec.Check(ctx, adm, ranges)
	var ue *admin.UnreachableError
	switch {
	case errors.As(err, &ue) && ue.Request == "ledger check":
		return nil, unavailableErr(fmt.Sprintf("checking the ledger for records older than --ttl %v: %v", r.ttl, ue.Err))
	case errors.As(err, &ue):
		return nil, unavailableErr(err.Error())
	case err != nil:
		return nil, err
	}
	if !check {
		for _, rg := range e.Old {
			r.log.Warn("records older than the ledger TTL: not checked against the ledger (--force); any whose entry expired applies again",
				"topic", r.topic, "partition", rg.Partition, "from", rg.From, "to", rg.To, "ttl", r.ttl)
		}
		return nil, nil
	}
	var lines []string
	for _, x := range e.Partitions {
		if x.Missing == 0 {
			if x.Old > 0 {
				r.log.Info("records older than the ledger TTL all have their ledger entries: none would apply again",
					"topic", r.topic, "partition", x.Partition, "old_records", x.Old, "ttl", r.ttl)
			}
			continue
		}
		lines = append(lines, fmt.Sprintf("partition %d: %d of the %d records older than --ttl %v that %s would read have no ledger entry (first at offset %d, last at %d): their entries may have expired, so their effects would apply again",
			x.Partition, x.Missing, x.Old, r.ttl, r.what, x.First, x.Last))
	}
	return lines, nil
}
