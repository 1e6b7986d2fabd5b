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
	Orders     int // records in the topic that are orders (with re-sends)
	Unique     int // unique order IDs
	Poison     int // poison records in the topic
	DLQ        int // records in the DLQ topic
	Decreases  int // committed offsets that went backwards while watched
	Lost       int
	Doubled    int
	Violations []string // the first few, each naming what is wrong
	More       int      // violations not listed
	Faults     Faults
}

// Faults are the driver's figures of what it did to the run and what the
// shardpipe processes reported; the checker prints them but judges nothing
// by them.
type Faults struct {
	Kills          int
	ZombiePauses   int
	RedisRestarts  int
	BrokerRestarts int
	Rebalances     int
	FencedCommits  int64
	Suppressed     int64
	Protocols      []string
}

// OK reports whether the run kept every promise.
func (r Report) OK() bool { return len(r.Violations) == 0 && r.Lost == 0 && r.Doubled == 0 }

// Line is the one-line figures summary.
func (r Report) Line() string {
	f := r.Faults
	return fmt.Sprintf("chaos: orders=%d unique=%d poison=%d dlq=%d protocols=%s kills=%d zombie_pauses=%d "+
		"redis_restarts=%d broker_restarts=%d rebalances=%d fenced_commits=%d suppressed=%d offset_decreases=%d lost=%d doubled=%d",
		r.Orders, r.Unique, r.Poison, r.DLQ, strings.Join(f.Protocols, "+"), f.Kills, f.ZombiePauses,
		f.RedisRestarts, f.BrokerRestarts, f.Rebalances, f.FencedCommits, f.Suppressed, r.Decreases, r.Lost, r.Doubled)
}
