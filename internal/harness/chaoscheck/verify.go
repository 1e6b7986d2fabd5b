package chaoscheck

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Config names what Verify reads.
type Config struct {
	Brokers      []string
	Redis        string // host:port, or a comma-separated list of Redis Cluster nodes
	Topic        string
	DLQTopic     string // empty: no DLQ check; poison records in the topic are then violations
	Group        string
	LedgerPrefix string
	// TotalsHash is the totals hash of `run --effect totals`; empty with
	// CallLog (guard mode has no totals).
	TotalsHash string
	// CallLog is the chaos receiver's calls file of a `run --effect http`
	// run (guard mode): the effect runs are judged from it, every ledger
	// claim must be done, and only a keyless record is poison. Empty: the
	// run used --effect totals.
	CallLog string
	// ReplicatedOffsets says the offsets topic has replicas (a Kafka of
	// several brokers): a decrease the Watcher saw that the group's commit
	// log does not hold is then a stale read after a coordinator failover,
	// counted apart, not a violation.
	ReplicatedOffsets bool
	// Kills are the consumer processes the driver SIGKILLed, Stops those it
	// SIGSTOPped (zombies, woken past their session), and RedisDown when
	// Redis was down: a key's effect may run again only after its previous
	// run's process was killed, or frozen with its call cut, before it
	// could mark the key done.
	Kills     []Kill
	Stops     []Kill
	RedisDown []Window
	// SQLRows, for the SQL pass (`run --effect sql`), are the rows per order
	// of its table: every ledger claim must be done and every order have one
	// row. Nil: not a SQL pass.
	SQLRows SQLRows
	// HTTPTimeout is the consumers' --http-timeout: a call the receiver
	// answered that much after it arrived was given up by its caller, its
	// outcome unknown to it, and may run again.
	HTTPTimeout time.Duration
}

// Verify reads the topic, the DLQ, the group's offsets and Redis, and
// judges them. w may be nil (no history of commits to judge). The error is
// for what kept it from reading; violations are in the Report.
func Verify(ctx context.Context, cfg Config, w *Watcher, faults Faults) (Report, error) {
	guard := cfg.CallLog != ""
	t, err := readTopic(ctx, cfg.Brokers, cfg.Topic, guard)
	if err != nil {
		return Report{}, err
	}
	var calls []Call
	if guard {
		if calls, err = ReadCalls(cfg.CallLog); err != nil {
			return Report{}, err
		}
	}
	var dlq []DLQEntry
	if cfg.DLQTopic != "" {
		if dlq, err = ReadDLQ(ctx, cfg.Brokers, cfg.DLQTopic); err != nil {
			return Report{}, err
		}
	}
	rdb := NewRedis(cfg.Redis)
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
	log, err := CommitLog(ctx, cfg.Brokers, cfg.Group, cfg.Topic)
	if err != nil {
		return Report{}, err
	}
	history := map[int32][]int64{}
	for p, cs := range log {
		for _, c := range cs {
			history[p] = append(history[p], c.Offset)
		}
	}
	fs := facts{topic: t, ledger: l, dlq: dlq, haveDLQ: cfg.DLQTopic != "", committed: committed, faults: faults,
		history: history, log: log, replicated: cfg.ReplicatedOffsets, rows: cfg.SQLRows}
	if guard {
		fs.effects = &effectFacts{calls: calls, kills: cfg.Kills, stops: cfg.Stops, redisDown: cfg.RedisDown, httpTimeout: cfg.HTTPTimeout}
	}
	if w != nil {
		fs.watched = true
		fs.decreases, fs.polls = w.Decreases()
	}
	return judge(fs), nil
}

// NewRedis returns a client of spec: one server (host:port), or a Redis
// Cluster (a comma-separated list of its nodes).
func NewRedis(spec string) redis.UniversalClient {
	if strings.Contains(spec, ",") {
		return redis.NewClusterClient(&redis.ClusterOptions{Addrs: strings.Split(spec, ",")})
	}
	return redis.NewClient(&redis.Options{Addr: spec})
}

// facts are what Verify read, for judge.
type facts struct {
	topic     *Topic
	ledger    *Ledger
	dlq       []DLQEntry
	haveDLQ   bool
	committed map[int32]int64
	watched   bool // a Watcher polled the commits during the run
	decreases []Decrease
	// history is every offset commit of the group for the topic, per
	// partition in log order, from Kafka's __consumer_offsets (nil: not
	// read). replicated says the offsets topic has replicas: a new
	// coordinator may then serve an older committed offset for a moment
	// after a failover, until its high watermark catches up with the log.
	history    map[int32][]int64
	log        map[int32][]Commit // history with each commit's member and time (nil: not read)
	replicated bool
	polls      Polls
	effects    *effectFacts // guard mode; nil for --effect totals
	rows       SQLRows      // the SQL pass; nil otherwise
	faults     Faults
}

// effectFacts are a guard-mode run's effect calls and what may excuse a
// second run.
type effectFacts struct {
	calls       []Call
	kills       []Kill
	stops       []Kill
	redisDown   []Window
	httpTimeout time.Duration
}

// judge is Verify's pure part.
func judge(fs facts) Report {
	t, v := fs.topic, &verdict{}
	var runs *EffectRuns
	var rows *RowRuns
	switch {
	case fs.effects != nil:
		checkLedger(t, fs.ledger, "done", v)
		e := checkEffects(t, fs.effects, v)
		runs = &e
	case fs.rows != nil:
		checkLedger(t, fs.ledger, "done", v)
		r := checkRows(t, fs.rows, v)
		rows = &r
	default:
		checkLedger(t, fs.ledger, "", v)
		checkTotals(t, fs.ledger.Totals, v)
	}
	if fs.haveDLQ {
		checkDLQ(t, fs.dlq, v)
	} else {
		for at, p := range t.Poison {
			v.fail("poison record %s (%s) in the topic, and no DLQ to check", at, p.Reason)
		}
	}
	checkOffsets(t.End, fs.committed, v)
	decreases := checkHistory(fs.history, fs.log, v)
	logged := loggedDecreases(fs.history, fs.log)
	stale := 0
	for _, d := range fs.decreases {
		if fs.replicated && fs.history != nil {
			stale++ // the log holds no such decrease (checkHistory)
			continue
		}
		decreases++
		v.fail("%s", d)
	}
	if fs.watched && fs.polls.Seen == 0 {
		v.fail("the watcher never read the group's committed offsets of %s (%d polls, %d failed): no commit history was checked",
			t.Name, fs.polls.Made, fs.polls.Failed)
	}
	sort.Strings(v.violations)
	return Report{Orders: t.Records - len(t.Poison), Unique: len(t.Orders), Poison: len(t.Poison), DLQ: v.dlq,
		Decreases: decreases, StaleReads: stale, Watch: fs.polls, Lost: max(v.lost, v.effectLost), Doubled: v.doubled,
		Effects: runs, Rows: rows, Violations: v.violations, More: v.more, Faults: fs.faults, LoggedDecreases: logged}
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

// String lists the violations, one per line, then the effect runs again
// after a kill (the documented window, not violations), then the figures.
func (r Report) String() string {
	s := ""
	for _, x := range r.Violations {
		s += "violation: " + x + "\n"
	}
	if r.Effects != nil {
		for _, x := range r.Effects.Windows {
			s += "window: " + x + "\n"
		}
	}
	if r.More > 0 {
		s += fmt.Sprintf("violation: ... and %d more\n", r.More)
	}
	return s + r.Line()
}
