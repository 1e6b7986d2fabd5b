package scenario

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/shardpipe/shardpipe/checkpoint"
	"github.com/shardpipe/shardpipe/pipeline"
)

// Report is what a scenario measured, for a test (or the demo) to check.
// Counts sum every consumer the scenario ran. Figures that a check compares
// with the pipelines' counts are read from the broker and Redis, so the
// check is not circular.
type Report struct {
	// Scenario names the scenario: "crash before commit", "rebalance",
	// "zombie", "replay" or "poison".
	Scenario string
	// Protocol is the group protocol the consumers used.
	Protocol pipeline.Protocol
	Topic    string // the topic the scenario created and produced to (Setup.Topic)
	Group    string // the consumer group its consumers joined (Setup.Group)
	Prefix   string // the Redis key prefix of its ledger (Setup.Prefix)
	// Keys is every business key the scenario produced, once each, in the
	// order produced.
	Keys []string
	// Attempts, Applied, Suppressed, DeadLettered and Fenced sum the
	// pipelines' own counters (pipeline.PartitionStats) over every consumer.
	Attempts int64 // records whose effects were attempted
	// Applied counts business keys applied, each once over all consumers,
	// by the one that committed past the record its claim names.
	Applied      int64
	Suppressed   int64 // effects suppressed as replays or re-sends
	DeadLettered int64 // poison records written to the dead-letter topic
	Fenced       int64 // commits refused because the partition had moved on
	// Stats holds every consumer's partition stats, consumers in the order
	// they started.
	Stats []pipeline.PartitionStats
	// Committed is the group's committed offset per partition, read from the
	// broker after the scenario.
	Committed map[checkpoint.Partition]int64
	// LogEnd is each partition's end as a read_committed consumer sees it,
	// the last stable offset (the high watermark unless a transaction is
	// still open), read from the broker after the scenario.
	LogEnd map[checkpoint.Partition]int64
	// Applications counts, per business key, its applications by the sink's
	// counting rule (sink.Outcome), per record: every Applied result, and one
	// for a record no call reported Applied but one reported Redelivered (the
	// ledger's claim names that record under another term, whose Apply
	// failed with its outcome unknown: a lost reply, a consumer that died
	// mid-batch). A key applied once counts 1 however many consumers met its
	// record; 2 means two claims were written for it (the ledger lost one, or
	// there is none).
	Applications map[string]int
	// EffectCalls counts Setup.Effect's successful calls per business key
	// (nil when the Setup has no Effect).
	EffectCalls map[string]int
	// Ledger is what Redis holds under the scenario's ledger prefix at the
	// end, read by the scenario itself (SCAN and GET), per business key. It
	// does not come from the sink's answers: ExactlyOnce checks it against
	// the topic's records.
	Ledger    map[string]Claim
	ledgerBad map[string]string
	records   map[Pos]string
	// Scenario figures: exactly one is set, by the scenario that ran.
	Crash     *CrashFigures     // set by CrashBeforeCommit
	Rebalance *RebalanceFigures // set by Rebalance
	Zombie    *ZombieFigures    // set by Zombie
	Replay    *ReplayFigures    // set by Replay
	Poison    *PoisonFigures    // set by Poison
}

// ExactlyOnce returns nil when every produced business key was applied
// exactly once (and, with an Effect, its effect ran exactly once), nothing
// else was applied, the ledger read back from Redis holds one finished claim
// per produced key, each naming a record of the topic that holds that key,
// and no other key, each poison record (Poison scenario) is in the
// dead-letter topic exactly once, and every partition's committed offset
// reached its log end. Otherwise the error lists the first violations of each
// kind.
//
// The ledger check reads Redis, so a Setup.Sink must keep its ledger under
// the prefix it is given, in the sink's claim format.
func (r *Report) ExactlyOnce() error {
	var bad []string
	want := make(map[string]bool, len(r.Keys))
	for _, k := range r.Keys {
		want[k] = true
	}
	check := func(what string, m map[string]int) {
		for _, k := range r.Keys {
			if n := m[k]; n != 1 {
				bad = append(bad, fmt.Sprintf("%s %q %d times", what, k, n))
			}
		}
		for k, n := range m {
			if !want[k] {
				bad = append(bad, fmt.Sprintf("%s %q %d times, but no such record was produced", what, k, n))
			}
		}
	}
	check("applied", r.Applications)
	if r.EffectCalls != nil {
		check("effect ran for", r.EffectCalls)
	}
	if f := r.Poison; f != nil {
		poison := map[string]bool{}
		for _, src := range f.Poison {
			poison[src] = true
			if n := f.DLQ[src]; n != 1 {
				bad = append(bad, fmt.Sprintf("poison record %s in the dead-letter topic %d times", src, n))
			}
		}
		for src, n := range f.DLQ {
			if !poison[src] {
				bad = append(bad, fmt.Sprintf("dead-letter record for %s (%d times), which is not poison", src, n))
			}
		}
		if f.Stray > 0 {
			bad = append(bad, fmt.Sprintf("%d dead-letter records from another topic", f.Stray))
		}
	}
	bad = append(bad, r.ledgerFaults()...)
	for p, end := range r.LogEnd {
		if c, ok := r.Committed[p]; !ok || c != end {
			bad = append(bad, fmt.Sprintf("%s committed %d, log end %d", p, c, end))
		}
	}
	if len(bad) == 0 {
		return nil
	}
	return fmt.Errorf("%s (%s): not exactly once: %s", r.Scenario, r.Protocol, summarize(bad))
}

// summarize lists violations sorted, at most five of each kind (a kind is
// a violation's first word), with how many more there were.
func summarize(bad []string) string {
	sort.Strings(bad)
	kinds := map[string]int{}
	var out []string
	for _, b := range bad {
		kind, _, _ := strings.Cut(b, " ")
		if kinds[kind]++; kinds[kind] <= 5 {
			out = append(out, b)
		}
	}
	var more []string
	for kind, n := range kinds {
		if n > 5 {
			more = append(more, fmt.Sprintf("%d more %q", n-5, kind))
		}
	}
	sort.Strings(more)
	s := strings.Join(out, "; ")
	if len(more) > 0 {
		s += " (and " + strings.Join(more, ", ") + ")"
	}
	return s
}

// String prints the report's counts in one line.
func (r *Report) String() string {
	return fmt.Sprintf("%s (%s): keys=%d attempts=%d applied=%d suppressed=%d dead_lettered=%d fenced=%d",
		r.Scenario, r.Protocol, len(r.Keys), r.Attempts, r.Applied, r.Suppressed, r.DeadLettered, r.Fenced)
}

// Line prints the scenario's own figures in one line: for
// CrashBeforeCommit the seed chapter's test line (with its defaults,
// "shard0=250 crash_attempts=37 checkpoint=30 replay=7 applied=1000
// suppressed=7"), for Rebalance "orders=... applied=... suppressed=...
// replays=... ledger=... totals_ok=... offset_decreases=...
// offset_polls=... assignments=...", and String for the others.
func (r *Report) Line() string {
	switch {
	case r.Crash != nil:
		f := r.Crash
		return fmt.Sprintf("shard0=%d crash_attempts=%d checkpoint=%d replay=%d applied=%d suppressed=%d",
			f.Shard0, f.CrashAttempts, f.Checkpoint, f.Replayed, r.Applied, r.Suppressed)
	case r.Rebalance != nil:
		f := r.Rebalance
		return fmt.Sprintf("orders=%d applied=%d suppressed=%d replays=%d ledger=%d totals_ok=%t offset_decreases=%d offset_polls=%d assignments=%d",
			f.Records, r.Applied, r.Suppressed, f.Replays, f.LedgerKeys, f.TotalsOK, f.OffsetDecreases, f.OffsetPolls, f.Assignments)
	}
	return r.String()
}

// finish makes the report of a run: the counts, the broker's offsets and the
// ledger read back.
func (env runEnv) finish(ctx context.Context, name string, keys []string, stats []pipeline.PartitionStats) (*Report, error) {
	r := &Report{Scenario: name, Protocol: env.Protocol, Topic: env.Topic, Group: env.Group,
		Prefix: env.Prefix, Keys: keys, Stats: stats, Applications: env.counts.snapshot(), EffectCalls: env.effects.snapshot()}
	tot := pipeline.Totals(stats)
	r.Attempts, r.Applied, r.Suppressed, r.DeadLettered, r.Fenced = tot.Attempts, tot.Applied, tot.Suppressed, tot.DeadLettered, tot.Fenced
	cl, err := kgo.NewClient(append(append([]kgo.Opt{}, env.kopts...), kgo.SeedBrokers(env.Brokers...))...)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	if r.Committed, r.LogEnd, err = offsets(ctx, kadm.NewClient(cl), env.Group, env.Topic); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	v, err := readLedgerView(ctx, env)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	r.Ledger, r.ledgerBad, r.records = v.claims, v.bad, v.keys
	return r, nil
}

// offsets reads group's committed offsets and topic's last stable offsets.
func offsets(ctx context.Context, adm *kadm.Client, group, topic string) (committed, ends map[checkpoint.Partition]int64, err error) {
	offs, err := adm.FetchOffsets(ctx, group)
	if err == nil {
		err = offs.Error()
	}
	if err != nil {
		return nil, nil, fmt.Errorf("committed offsets of %s: %w", group, err)
	}
	le, err := adm.ListCommittedOffsets(ctx, topic)
	if err == nil {
		err = le.Error()
	}
	if err != nil {
		return nil, nil, fmt.Errorf("end offsets of %s: %w", topic, err)
	}
	committed, ends = map[checkpoint.Partition]int64{}, map[checkpoint.Partition]int64{}
	le.Each(func(o kadm.ListedOffset) {
		p := checkpoint.Partition{Topic: o.Topic, Partition: o.Partition}
		ends[p] = o.Offset
		if c, ok := offs.Lookup(o.Topic, o.Partition); ok {
			committed[p] = c.At
		}
	})
	return committed, ends, nil
}
