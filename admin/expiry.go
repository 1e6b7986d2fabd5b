package admin

import (
	"context"
	"log/slog"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/shardpipe/shardpipe/pipeline"
)

// ExpiryCheck is the TTL rule of a replay or an offset reset: a ledger
// entry lives for the TTL after the last record that met its key, so only
// records timestamped more than TTL ago can have lost theirs, and of those
// only the ones whose key the ledger lacks now would apply again.
type ExpiryCheck struct {
	// Brokers are the seed brokers of the client that reads the old
	// records (one client per Check, closed after it).
	Brokers []string
	// KafkaOpts are more options of that client: TLS, SASL...
	KafkaOpts []kgo.Opt
	// Topic is the topic the ranges are of.
	Topic string
	// TTL is the ledger's TTL (sink.WithTTL).
	TTL time.Duration
	// Now is the time the TTL counts back from; zero: time.Now().
	Now time.Time
	// Ledger returns the ledger to ask (EXISTS, read-only) about the old
	// records' keys, such as a *sink.Ledger built for the ranges' key
	// space. It is called only when some records are older than the TTL,
	// so a caller connects to Redis only when needed. nil: the old records
	// are counted, not checked.
	Ledger func() (pipeline.Checker, error)
	// MaxBatch is how many keys one EXISTS round trip asks; 0: 500.
	MaxBatch int
}

// Expiry is what an ExpiryCheck found.
type Expiry struct {
	// Old holds, per partition with any, the part of its range whose
	// records are older than the TTL (From up to From plus their count).
	Old []pipeline.Range
	// Checked says the ledger was asked (Ledger set and Old not empty).
	Checked bool
	// Partitions says, per partition of Old, how many of its old records'
	// keys the ledger lacks (pipeline.Expired), when Checked.
	Partitions []pipeline.Expired
}

// Missing returns the partitions holding old records whose keys the
// ledger lacks: they would apply again.
func (e Expiry) Missing() []pipeline.Expired {
	var out []pipeline.Expired
	for _, p := range e.Partitions {
		if p.Missing > 0 {
			out = append(out, p)
		}
	}
	return out
}

// Check counts the records of ranges older than c.TTL (cheap: one offset
// lookup by time) and, when there are any and c.Ledger is set, reads them
// and asks the ledger which keys it lacks (pipeline.CheckExpired: one pass
// over the old part of the ranges, one EXISTS round trip per MaxBatch
// keys). A request that fails is an *UnreachableError (Request
// "ListOffsets", or "ledger check" for the read and the ledger's answers);
// an error of c.Ledger is returned as it is.
func (c ExpiryCheck) Check(ctx context.Context, adm *kadm.Client, ranges []pipeline.Range) (Expiry, error) {
	var e Expiry
	now := c.Now
	if now.IsZero() {
		now = time.Now()
	}
	cutoff := now.Add(-c.TTL)
	old, err := pipeline.RecordsBefore(ctx, adm, c.Topic, ranges, cutoff)
	if err != nil {
		return e, unreachable("kafka", "ListOffsets", err, err.Error())
	}
	for _, rg := range ranges {
		if n := old[rg.Partition]; n > 0 {
			e.Old = append(e.Old, pipeline.Range{Partition: rg.Partition, From: rg.From, To: rg.From + n})
		}
	}
	if len(e.Old) == 0 || c.Ledger == nil {
		return e, nil
	}
	chk, err := c.Ledger()
	if err != nil {
		return e, err
	}
	batch := c.MaxBatch
	if batch <= 0 {
		batch = 500
	}
	found, err := pipeline.CheckExpired(ctx, c.Brokers, c.Topic, e.Old, cutoff, chk, batch, c.KafkaOpts...)
	if err != nil {
		return e, unreachable("kafka", "ledger check", err, "checking the ledger for records older than the TTL "+c.TTL.String()+": "+err.Error())
	}
	e.Checked, e.Partitions = true, found
	return e, nil
}

// Log logs, per partition, what e found: when forced names why the ledger
// was not asked on purpose (such as "--force"), a warning per range of old
// records, since any whose entry expired applies again; per partition whose
// old records all have their ledger entries, that none would apply again.
func (e Expiry) Log(log *slog.Logger, topic string, ttl time.Duration, forced string) {
	for _, rg := range e.Old {
		if forced != "" {
			log.Warn("records older than the ledger TTL: not checked against the ledger ("+forced+"); any whose entry expired applies again",
				"topic", topic, "partition", rg.Partition, "from", rg.From, "to", rg.To, "ttl", ttl)
		}
	}
	for _, x := range e.Partitions {
		if x.Missing == 0 && x.Old > 0 {
			log.Info("records older than the ledger TTL all have their ledger entries: none would apply again",
				"topic", topic, "partition", x.Partition, "old_records", x.Old, "ttl", ttl)
		}
	}
}
