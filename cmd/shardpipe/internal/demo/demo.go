// Package demo is `shardpipe demo`: the real pipeline and ledger code
// through two scenarios on an in-process Kafka and Redis, explained as it
// goes. The command keeps its flags.
package demo

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/shardpipe/shardpipe/cmd/shardpipe/internal/embedded"
	"github.com/shardpipe/shardpipe/integration/scenario"
	"github.com/shardpipe/shardpipe/pipeline"
)

// Run runs both scenarios on fresh in-process servers (kfake and
// miniredis) and explains them on w: a consumer that crashes between effect
// and commit and is resumed by another, and a rebalance of orders
// (at least 30) while they arrive. It fails when the rebalance broke
// exactly-once. Takes a few seconds; each scenario may take up to timeout
// (0: scenario.DefaultTimeout).
func Run(ctx context.Context, w io.Writer, proto pipeline.Protocol, orders int, timeout time.Duration) error {
	srv, err := embedded.Start()
	if err != nil {
		return err
	}
	defer srv.Close()
	fmt.Fprintf(w, "shardpipe demo: in-process Kafka broker (kfake) at %s and Redis (miniredis) at %s; group protocol %s.\n\n",
		srv.Brokers()[0], srv.RedisAddr(), proto)

	start := time.Now()
	seed, err := scenario.CrashBeforeCommit(ctx, scenario.Setup{Brokers: srv.Brokers(), Redis: srv.RedisAddr(),
		Topic: "orders", Group: "demo-crash", Prefix: "demo:crash:", Protocol: proto, Timeout: timeout}, scenario.CrashConfig{})
	if err != nil {
		return fmt.Errorf("crash-and-resume scenario: %w", err)
	}
	explainSeed(w, seed, time.Since(start))

	start = time.Now()
	rb, err := scenario.Rebalance(ctx, scenario.Setup{Brokers: srv.Brokers(), Redis: srv.RedisAddr(),
		Topic: "orders-rebalance", Group: "demo-rebalance", Prefix: "demo:rebalance:", Protocol: proto, Timeout: timeout},
		scenario.RebalanceConfig{Records: orders, Partitions: 8, CommitEvery: 50})
	if err != nil {
		return fmt.Errorf("rebalance scenario: %w", err)
	}
	explainRebalance(w, rb, time.Since(start))
	if f := rb.Rebalance; rb.Applied != int64(f.Records) || f.LedgerKeys != f.Records || !f.TotalsOK || f.OffsetDecreases != 0 {
		return fmt.Errorf("rebalance broke exactly-once: %s", rb.Line())
	}
	return nil
}

func explainSeed(w io.Writer, rep *scenario.Report, took time.Duration) {
	r := rep.Crash
	fmt.Fprintf(w, "1. Crash between effect and commit (%v)\n\n", took.Round(time.Millisecond))
	fmt.Fprintf(w, "   %s\n\n", rep.Line())
	wrap(w, "   ", fmt.Sprintf(`%d orders went to %d partitions (%d each), keyed by order ID. A consumer applied each
order's effect (a Redis SET NX of the order ID in the ledger) and committed a partition's
offset every %d orders, only after the effects before it had landed.
On partition 0 it crashed after %d attempts: effects 0..%d had landed, but the last commit
was at offset %d (checkpoint=%d). Kafka therefore still considered %d..%d unprocessed.
A second consumer in the same group resumed partition 0 from offset %d. It saw those %d
orders again (replay=%d): the ledger already held their keys, so their effects were
suppressed instead of applied twice. Every order landed exactly once: applied=%d,
suppressed=%d.`, scenario.SeedPartitions*r.Shard0, scenario.SeedPartitions, r.Shard0, scenario.SeedCommitEvery,
		r.CrashAttempts, r.CrashAttempts-1, r.Checkpoint, r.Checkpoint, r.Checkpoint, r.CrashAttempts-1,
		r.Checkpoint, r.CrashAttempts-r.Checkpoint, r.Replayed, rep.Applied, rep.Suppressed))
	fmt.Fprintln(w)
}

func explainRebalance(w io.Writer, rep *scenario.Report, took time.Duration) {
	r := rep.Rebalance
	fmt.Fprintf(w, "2. Rebalance while orders arrive (%v)\n\n", took.Round(time.Millisecond))
	fmt.Fprintf(w, "   %s\n\n", rep.Line())
	wrap(w, "   ", fmt.Sprintf(`%d orders arrived in three waves on 8 partitions. Two consumers shared them; a third
joined during the second wave and the first left during the third, so partitions moved
between consumers (%d assignments in all). On a revoke a consumer finished its batch and
committed before handing the partition over; a consumer that lost a partition could no
longer commit its offset. Each effect added the order's amount to a per-customer total
in the same Redis script as its ledger entry.
Result: %d effects applied for %d orders; %s; the ledger holds %d keys, the totals equal
the sums computed from the orders (totals_ok=%t), and no committed offset ever went
backwards (offset_decreases=%d).`, r.Records, r.Assignments, rep.Applied, r.Records, replayWords(rep), r.LedgerKeys, r.TotalsOK, r.OffsetDecreases))
	fmt.Fprintln(w)
	wrap(w, "", `What this shows: offsets are committed only past records whose effects have landed, and the
ledger keyed by business key turns every replay (after a crash, a rebalance, or a consumer that
lost its partitions) into a no-op. Run it on real servers with 'shardpipe run'; see docs/getting-started.md.`)
}

// wrap prints text as one paragraph, re-flowed to 92 columns after indent.
func wrap(w io.Writer, indent, text string) {
	const width = 92
	line := indent
	for _, word := range strings.Fields(text) {
		if len(line) > len(indent) && len(line)+1+len(word) > width {
			fmt.Fprintln(w, line)
			line = indent
		}
		if len(line) > len(indent) {
			line += " "
		}
		line += word
	}
	if len(line) > len(indent) {
		fmt.Fprintln(w, line)
	}
}

// replayWords says what happened to records seen again after a hand-over.
func replayWords(rep *scenario.Report) string {
	r := rep.Rebalance
	if r.Replays == 0 {
		return "no record was seen twice (replays=0), because every consumer committed its finished batches before it handed a partition over; had one died instead, the ledger would have suppressed the replay as in part 1"
	}
	return fmt.Sprintf("%d records were seen again after a hand-over (replays=%d) and the ledger suppressed their effects (suppressed=%d)", r.Replays, r.Replays, rep.Suppressed)
}
