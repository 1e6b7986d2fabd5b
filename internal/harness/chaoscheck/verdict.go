package chaoscheck

import (
	"fmt"
	"sort"
	"strings"
)

// maxListed is how many violations a Report lists; the counts cover all.
const maxListed = 50

// verdict collects violations and the lost/doubled counts while checking.
type verdict struct {
	violations []string
	more       int
	lost       int // orders without a ledger key, poison records not in the DLQ
	effectLost int // estimated orders whose effect is missing from the totals
	doubled    int
	dlq        int
}

func (v *verdict) fail(format string, args ...any) {
	if len(v.violations) >= maxListed {
		v.more++
		return
	}
	v.violations = append(v.violations, fmt.Sprintf(format, args...))
}

// checkTotals compares the totals hash with the sums over unique orders.
// A customer above its sum had at least one order applied twice: the excess
// is matched to that customer's orders where it can be, else counted once.
// A customer below lost effects; an order without a ledger key shows up
// there too, so Lost is the larger of the two counts, not their sum.
func checkTotals(t *Topic, got map[string]int64, v *verdict) {
	want := map[string]int64{}
	amounts := map[string][]int64{}
	for _, o := range t.Orders {
		want[o.Customer] += o.Amount
		amounts[o.Customer] = append(amounts[o.Customer], o.Amount)
	}
	custs := map[string]bool{}
	for c := range want {
		custs[c] = true
	}
	for c := range got {
		custs[c] = true
	}
	for c := range custs {
		diff := got[c] - want[c]
		switch {
		case diff > 0:
			n := explain(diff, amounts[c])
			v.doubled += n
			v.fail("totals[%q] = %d, want %d: %d cents too many (about %d order(s) applied twice)", c, got[c], want[c], diff, n)
		case diff < 0:
			n := explain(-diff, amounts[c])
			v.effectLost += n
			v.fail("totals[%q] = %d, want %d: %d cents missing (about %d order effect(s) lost)", c, got[c], want[c], -diff, n)
		}
	}
	for _, s := range t.Conflicts {
		v.fail("%s", s)
	}
}

// explain estimates how many of amounts add up to diff: greedily from the
// largest; at least 1.
func explain(diff int64, amounts []int64) int {
	a := append([]int64(nil), amounts...)
	sort.Slice(a, func(i, j int) bool { return a[i] > a[j] })
	n := 0
	for _, x := range a {
		if x <= diff {
			diff -= x
			n++
		}
		if diff == 0 {
			return n
		}
	}
	return max(n, 1)
}

// Report is the outcome of Verify.
type Report struct {
	Orders    int // records in the topic that are orders (with re-sends)
	Unique    int // unique order IDs
	Poison    int // poison records in the topic
	DLQ       int // records in the DLQ topic
	Decreases int // committed offsets that went backwards: in the commit log, or while watched
	// StaleReads are decreases the watcher saw that the commit log does not
	// hold: a new group coordinator served an older offset for a moment
	// after a failover (replicated offsets topic only).
	StaleReads int
	Watch      Polls // the watcher's polls of the committed offsets
	Lost       int
	Doubled    int
	// Effects are the external effect's runs (guard mode), nil for a run
	// with --effect totals.
	Effects *EffectRuns
	// Rows are the SQL pass's table figures, nil for the other passes.
	Rows       *RowRuns
	Violations []string // the first few, each naming what is wrong
	More       int      // violations not listed
	Faults     Faults
	// LoggedDecreases are the decreases in the group's commit log, each
	// with the commits on either side (who, when): for the driver to show
	// what the consumers were doing then.
	LoggedDecreases []LoggedDecrease
}

// LoggedDecrease is an offset committed below an earlier commit of its
// partition, in the group's commit log.
type LoggedDecrease struct {
	Partition     int32
	Before, After Commit // the highest commit before, and the lower one after it
}

// Faults are the driver's figures of what it did to the run and what the
// shardpipe processes reported; the checker prints them but judges nothing
// by them. Each fault is counted when done, and again (the second field
// of each pair) when the driver observed its effect: a kill of a consumer
// holding landed, uncommitted records; a zombie that woke fenced out; a new
// Redis process that kept what was written before the kill and on which the
// consumers resumed; a broker outage the commit watcher saw.
type Faults struct {
	Kills             int
	KillsHolding      int
	ZombiePauses      int
	ZombiesFenced     int
	RedisRestarts     int
	RedisRecovered    int
	BrokerRestarts    int
	BrokerOutagesSeen int
	// RedisOutages counts Redis kept down past the sink's retry budget while
	// guard-mode effects were in flight (guard pass).
	RedisOutages int
	// PostgresRestarts counts immediate PostgreSQL restarts (SQL pass), and
	// PostgresRestartsSeen those after which a consumer logged a retried
	// effect: the restart reached effects in flight.
	PostgresRestarts, PostgresRestartsSeen int
	// Cluster says the run was on a Redis Cluster and a three-broker Kafka:
	// Redis faults were master failovers (a master SIGKILLed, its replica
	// took over and kept what was replicated before, the consumers wrote on)
	// and broker faults SIGKILLs (leaderships moved to the others, the
	// commit watcher read on while the broker was down).
	Cluster         bool
	Failovers       int
	FailoversSeen   int
	BrokerKills     int
	BrokerKillsSeen int
	Rebalances      int
	FencedCommits   int64
	Suppressed      int64
	Protocols       []string
}

// OK reports whether the run kept every promise.
func (r Report) OK() bool { return len(r.Violations) == 0 && r.Lost == 0 && r.Doubled == 0 }

// Line is the one-line figures summary; a guard-mode run adds its Redis
// outages and effect runs.
func (r Report) Line() string {
	f := r.Faults
	prefix := "chaos:"
	switch {
	case r.Effects != nil:
		prefix = "chaos guard:"
	case r.Rows != nil:
		prefix = "chaos sql:"
	}
	s := fmt.Sprintf("%s orders=%d unique=%d poison=%d dlq=%d protocols=%s kills=%d/%d zombie_pauses=%d/%d "+
		"redis_restarts=%d/%d broker_restarts=%d/%d rebalances=%d fenced_commits=%d suppressed=%d replayed=%d watch_polls=%d offset_decreases=%d lost=%d doubled=%d",
		prefix, r.Orders, r.Unique, r.Poison, r.DLQ, strings.Join(f.Protocols, "+"), f.KillsHolding, f.Kills,
		f.ZombiesFenced, f.ZombiePauses, f.RedisRecovered, f.RedisRestarts, f.BrokerOutagesSeen, f.BrokerRestarts,
		f.Rebalances, f.FencedCommits, f.Suppressed, r.Replayed(), r.Watch.Seen, r.Decreases, r.Lost, r.Doubled)
	if f.Cluster {
		s += fmt.Sprintf(" redis_failovers=%d/%d broker_kills=%d/%d offset_stale_reads=%d", f.FailoversSeen, f.Failovers,
			f.BrokerKillsSeen, f.BrokerKills, r.StaleReads)
	}
	if r.Effects != nil {
		s += fmt.Sprintf(" redis_outages=%d %s", f.RedisOutages, r.Effects.Line())
	}
	if r.Rows != nil {
		s += fmt.Sprintf(" postgres_restarts=%d/%d %s", f.PostgresRestartsSeen, f.PostgresRestarts, r.Rows.Line())
	}
	return s
}

// Replayed is how many suppressed records were not re-sends: records read
// again after a kill, a zombie or a rebalance, whose effects had landed
// (the consumers' suppressed count minus the topic's re-sends). A killed
// consumer's count is its last metrics scrape, so this is a lower bound.
func (r Report) Replayed() int64 {
	return r.Faults.Suppressed - int64(r.Orders-r.Unique)
}
