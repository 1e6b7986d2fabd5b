package chaoscheck

import (
	"context"
	"fmt"
	"sort"

	"github.com/redis/go-redis/v9"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Config names what Verify reads.
type Config struct {
	Brokers      []string
	Redis        string // host:port
	Topic        string
	DLQTopic     string // empty: no DLQ check; poison records in the topic are then violations
	Group        string
	LedgerPrefix string
	TotalsHash   string
}

// Verify reads the topic, the DLQ, the group's offsets and Redis, and
// judges them. w may be nil (no history of commits to judge). The error is
// for what kept it from reading; violations are in the Report.
func Verify(ctx context.Context, cfg Config, w *Watcher, faults Faults) (Report, error) {
	t, err := ReadTopic(ctx, cfg.Brokers, cfg.Topic)
	if err != nil {
		return Report{}, err
	}
	var dlq []DLQEntry
	if cfg.DLQTopic != "" {
		if dlq, err = ReadDLQ(ctx, cfg.Brokers, cfg.DLQTopic); err != nil {
			return Report{}, err
		}
	}
	rdb := redis.NewClient(&redis.Options{Addr: cfg.Redis})
	defer rdb.Close()
	l, err := ReadLedger(ctx, rdb, cfg.LedgerPrefix, cfg.TotalsHash)
	if err != nil {
		return Report{}, err
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(cfg.Brokers...))
	if err != nil {
		return Report{}, err
	}
	defer cl.Close()
	committed, err := Committed(ctx, kadm.NewClient(cl), cfg.Group, cfg.Topic)
	if err != nil {
		return Report{}, err
	}
	var ds []Decrease
	if w != nil {
		ds, _, _ = w.Decreases()
	}
	return judge(t, l, dlq, cfg.DLQTopic != "", committed, ds, faults), nil
}

// judge is Verify's pure part.
func judge(t *Topic, l *Ledger, dlq []DLQEntry, haveDLQ bool, committed map[int32]int64, ds []Decrease, f Faults) Report {
	v := &verdict{}
	checkLedger(t, l, v)
	checkTotals(t, l.Totals, v)
	if haveDLQ {
		checkDLQ(t, dlq, v)
	} else {
		for at, p := range t.Poison {
			v.fail("poison record %s (%s) in the topic, and no DLQ to check", at, p.Reason)
		}
	}
	checkOffsets(t.End, committed, v)
	for _, d := range ds {
		v.fail("%s", d)
	}
	sort.Strings(v.violations)
	return Report{Orders: t.Records - len(t.Poison), Unique: len(t.Orders), Poison: len(t.Poison), DLQ: v.dlq,
		Decreases: len(ds), Lost: max(v.lost, v.effectLost), Doubled: v.doubled, Violations: v.violations, More: v.more, Faults: f}
}

// checkOffsets wants every partition's committed offset at its log end.
func checkOffsets(end, committed map[int32]int64, v *verdict) {
	for p, e := range end {
		c, ok := committed[p]
		if !ok {
			c = -1
		}
		if c != e && (c != -1 || e != 0) { // an empty partition needs no commit
			v.fail("partition %d: committed offset %d, log end %d", p, c, e)
		}
	}
	for p := range committed {
		if _, ok := end[p]; !ok {
			v.fail("partition %d: committed, but the topic has no such partition", p)
		}
	}
}

// String lists the violations, one per line.
func (r Report) String() string {
	s := ""
	for _, x := range r.Violations {
		s += "violation: " + x + "\n"
	}
	if r.More > 0 {
		s += fmt.Sprintf("violation: ... and %d more\n", r.More)
	}
	return s + r.Line()
}
