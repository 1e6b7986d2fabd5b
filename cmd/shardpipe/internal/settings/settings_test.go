package settings

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/urfave/cli/v3"

	"github.com/shardpipe/shardpipe/admin"
	"github.com/shardpipe/shardpipe/cmd/shardpipe/internal/cliflags"
	"github.com/shardpipe/shardpipe/pipeline"
	"github.com/shardpipe/shardpipe/sink"
)

// load parses args with g's flags and loads them; it returns the problems.
func load(t *testing.T, g cliflags.Group, args ...string) []string {
	t.Helper()
	var bad cliflags.Problems
	cmd := &cli.Command{Name: "x", Flags: g.Flags, Action: func(_ context.Context, c *cli.Command) error { g.Load(c, &bad); return nil }}
	if err := cmd.Run(context.Background(), append([]string{"x"}, args...)); err != nil {
		t.Fatalf("%q: %v", args, err)
	}
	return bad
}

// checkProblems fails unless bad holds exactly one problem per want, each
// containing it, in order.
func checkProblems(t *testing.T, args []string, bad []string, want ...string) {
	t.Helper()
	ok := len(bad) == len(want)
	for i := 0; ok && i < len(want); i++ {
		ok = strings.Contains(bad[i], want[i])
	}
	if !ok {
		t.Errorf("%q: problems %q, want one each containing %q", args, bad, want)
	}
}

func TestLedgerGroup(t *testing.T) {
	tests := []struct {
		args    []string
		cluster bool
		want    []string // problems
		check   func(Ledger) bool
	}{
		{nil, false, nil, func(l Ledger) bool {
			return l.Spec.Prefix == "shardpipe:ledger:" && l.Spec.TTL == 7*24*time.Hour && !l.Spec.PerTopic && l.Spec.Totals == nil && !l.HTTP &&
				l.KeySpace() == "shared"
		}},
		{[]string{"--key-space=per-topic", "--key-from=json:id", "--effect=totals"}, false, nil, func(l Ledger) bool {
			return l.Spec.PerTopic && l.KeySpace() == "per-topic" && l.Spec.Keys.String() == "json:id" &&
				*l.Spec.Totals == sink.Totals{Hash: "shardpipe:totals", GroupField: "customer", AmountField: "amount_cents"}
		}},
		{[]string{"--effect=http"}, false, nil, func(l Ledger) bool { return l.HTTP && l.Spec.Totals == nil }},
		{[]string{"--ledger-prefix=", "--ttl=0s", "--key-space=topic", "--key-from=body", "--effect=sum"}, false, []string{
			"--ledger-prefix (SHARDPIPE_LEDGER_PREFIX): empty", "--ttl (SHARDPIPE_TTL) 0s: want 1ms to 87600h",
			`--key-space (SHARDPIPE_KEY_SPACE) "topic": want shared or per-topic`, `--key-from (SHARDPIPE_KEY_FROM) "body"`,
			`--effect (SHARDPIPE_EFFECT) "sum": want none, totals, http or sql`}, nil},
		{[]string{"--ttl=1us"}, false, []string{"--ttl (SHARDPIPE_TTL) 1µs: want 1ms to 87600h"}, nil},
		{[]string{"--effect=totals", "--totals-hash=", "--totals-group-field="}, false, []string{
			"--totals-hash (SHARDPIPE_TOTALS_HASH): empty; --effect totals needs it", "--totals-group-field (SHARDPIPE_TOTALS_GROUP_FIELD): empty"}, nil},
		// Redis Cluster: the ledger entry and the totals land in one
		// transaction, so both keys need one hash slot.
		{[]string{"--effect=totals"}, true, []string{"on Redis Cluster both need the same {hash tag}"}, nil},
		{[]string{"--effect=totals", "--ledger-prefix={o}:l:", "--totals-hash={p}:t"}, true, []string{"same {hash tag}"}, nil},
		{[]string{"--effect=totals", "--ledger-prefix={o}:l:", "--totals-hash={o}:t"}, true, nil, nil},
		{[]string{"--effect=none"}, true, nil, nil},
	}
	for _, tt := range tests {
		var l Ledger
		cluster := tt.cluster
		bad := load(t, LedgerGroup(&l, &cluster), tt.args...)
		checkProblems(t, tt.args, bad, tt.want...)
		if tt.check != nil && !tt.check(l) {
			t.Errorf("%q: loaded %+v", tt.args, l)
		}
	}
}

func TestHTTPGroup(t *testing.T) {
	tests := []struct {
		args []string
		on   bool
		want []string
	}{
		{nil, false, nil}, // not --effect http: nothing checked
		{[]string{"--http-url=http://h:1/x"}, true, nil},
		{nil, true, []string{"--http-url (SHARDPIPE_HTTP_URL): empty"}},
		{[]string{"--http-url=h:1/x"}, true, []string{"want an absolute http:// or https:// URL with a host"}},
		{[]string{"--http-url=https://u:secret@/x"}, true, []string{`"https://u:xxxxx@/x": want an absolute`}},
		{[]string{"--http-url=http://h/", "--http-timeout=30s"}, true, []string{"--http-timeout (SHARDPIPE_HTTP_TIMEOUT) 30s: want 1ms to 29s (below the guard lease 30s"}},
		{[]string{"--http-url=http://h/", "--http-ca=does-not-exist.pem"}, true, []string{`--http-ca (SHARDPIPE_HTTP_CA) "does-not-exist.pem"`}},
	}
	for _, tt := range tests {
		var h HTTP
		on := tt.on
		bad := load(t, HTTPGroup(&h, &on), tt.args...)
		checkProblems(t, tt.args, bad, tt.want...)
		if tt.on && len(tt.want) == 0 && (h.URL == nil || h.Timeout != 10*time.Second) {
			t.Errorf("%q: loaded %+v", tt.args, h)
		}
	}
}

func TestCommitGroup(t *testing.T) {
	const mib = 1 << 20
	tests := []struct {
		args []string
		want []string
		cc   Commit
	}{
		{nil, nil, Commit{Every: 500, Interval: 5 * time.Second, MaxBatch: 500, QueueBytes: 2 * mib}},
		{[]string{"--commit-every=0", "--max-uncommitted=7"}, nil, Commit{Interval: 5 * time.Second, MaxUncommitted: 7, MaxBatch: 500, QueueBytes: 2 * mib}},
		{[]string{"--commit-every=0", "--commit-interval=0s"}, []string{"are both 0: offsets would be committed only at shutdown"}, Commit{MaxBatch: 500, QueueBytes: 2 * mib}},
		{[]string{"--commit-every=-1", "--commit-interval=-1s", "--max-batch=0", "--max-uncommitted=-1"}, []string{
			"--commit-every (SHARDPIPE_COMMIT_EVERY) -1: want 0 to 1000000 (0: off)", "--commit-interval (SHARDPIPE_COMMIT_INTERVAL) -1s: want 0s to 24h (0: off)",
			"--max-batch (SHARDPIPE_MAX_BATCH) 0: want 1 to 100000", "--max-uncommitted (SHARDPIPE_MAX_UNCOMMITTED) -1: want 0 to 10000000 (0: the default)"},
			Commit{Every: -1, Interval: -time.Second, MaxUncommitted: -1, QueueBytes: 2 * mib}},
		{[]string{"--max-uncommitted=50"}, []string{"--max-uncommitted (SHARDPIPE_MAX_UNCOMMITTED) 50 is below --commit-every (SHARDPIPE_COMMIT_EVERY) 500"},
			Commit{Every: 500, Interval: 5 * time.Second, MaxUncommitted: 50, MaxBatch: 500, QueueBytes: 2 * mib}},
		// A partition's queue bounds.
		{[]string{"--queue-records=8000", "--queue-bytes=16MiB"}, nil,
			Commit{Every: 500, Interval: 5 * time.Second, MaxBatch: 500, QueueRecords: 8000, QueueBytes: 16 * mib}},
		{[]string{"--max-batch=50", "--queue-records=50", "--queue-bytes=1KiB"}, nil,
			Commit{Every: 500, Interval: 5 * time.Second, MaxBatch: 50, QueueRecords: 50, QueueBytes: 1 << 10}},
		{[]string{"--queue-bytes=1GiB"}, nil, Commit{Every: 500, Interval: 5 * time.Second, MaxBatch: 500, QueueBytes: 1 << 30}},
		{[]string{"--queue-records=100"}, []string{"--queue-records (SHARDPIPE_QUEUE_RECORDS) 100 is below --max-batch (SHARDPIPE_MAX_BATCH) 500"},
			Commit{Every: 500, Interval: 5 * time.Second, MaxBatch: 500, QueueRecords: 100, QueueBytes: 2 * mib}},
		{[]string{"--queue-records=-1"}, []string{"--queue-records (SHARDPIPE_QUEUE_RECORDS) -1: want 0 to 10000000 (0: 4 x --max-batch)"},
			Commit{Every: 500, Interval: 5 * time.Second, MaxBatch: 500, QueueRecords: -1, QueueBytes: 2 * mib}},
		{[]string{"--queue-bytes=lots"}, []string{`--queue-bytes (SHARDPIPE_QUEUE_BYTES): "lots" is not a size: want a whole number of bytes`},
			Commit{Every: 500, Interval: 5 * time.Second, MaxBatch: 500}},
		{[]string{"--queue-bytes=1023"}, []string{"--queue-bytes (SHARDPIPE_QUEUE_BYTES) 1023: want 1KiB to 1GiB"},
			Commit{Every: 500, Interval: 5 * time.Second, MaxBatch: 500, QueueBytes: 1023}},
		{[]string{"--queue-bytes=2GiB"}, []string{"--queue-bytes (SHARDPIPE_QUEUE_BYTES) 2GiB: want 1KiB to 1GiB"},
			Commit{Every: 500, Interval: 5 * time.Second, MaxBatch: 500, QueueBytes: 2 << 30}},
	}
	for _, tt := range tests {
		var cc Commit
		checkProblems(t, tt.args, load(t, CommitGroup(&cc), tt.args...), tt.want...)
		if cc != tt.cc {
			t.Errorf("%q: loaded %+v, want %+v", tt.args, cc, tt.cc)
		}
	}
}

// TestCommitOptionsReachThePipeline: the queue bounds loaded from the flags
// are the pipeline's: pipeline.New refuses a queue below the batch, and
// names the queue the flags gave.
func TestCommitOptionsReachThePipeline(t *testing.T) {
	ok := pipeline.ApplyFunc(func(context.Context, []sink.Record) ([]sink.Result, error) { return nil, nil })
	base := []pipeline.GroupOpt{pipeline.Brokers("127.0.0.1:1"), pipeline.Topics("t"), pipeline.Group("g"), pipeline.Sink(ok)}
	newWith := func(cc Commit) error {
		p, err := pipeline.New(append(base, pipeline.Options(cc.Options(cc.MaxBatch, nil, nil)...))...)
		if err == nil {
			_ = p.Close(context.Background())
		}
		return err
	}
	cc := Commit{Every: 500, MaxBatch: 500, QueueRecords: 499, QueueBytes: 1 << 20}
	if err := newWith(cc); err == nil || !strings.Contains(err.Error(), "queue 499") {
		t.Errorf("queue of 499 records under batches of 500: %v, want pipeline.New to refuse it", err)
	}
	cc.QueueRecords = 500
	if err := newWith(cc); err != nil {
		t.Errorf("queue of 500 records: %v", err)
	}
	cc.QueueRecords, cc.QueueBytes = 0, -1 // only the flag's check keeps this out
	if err := newWith(cc); err == nil || !strings.Contains(err.Error(), "queue bytes -1") {
		t.Errorf("queue of -1 bytes: %v, want pipeline.New to refuse it", err)
	}
}

func TestInFlightGroup(t *testing.T) {
	tests := []struct {
		args []string
		want []string
		ic   InFlight
	}{
		{nil, nil, InFlight{Total: 1024, Attempts: 5}},
		{[]string{"--max-in-flight=8", "--on-effect-failure=stop"}, nil, InFlight{PerPartition: 8, Given: true, Total: 1024, Attempts: 5, StopOnFailure: true}},
		{[]string{"--max-in-flight=4097", "--max-in-flight-total=0", "--effect-attempts=101", "--on-effect-failure=skip"}, []string{
			"--max-in-flight (SHARDPIPE_MAX_IN_FLIGHT) 4097: want 0 to 4096", "--max-in-flight-total (SHARDPIPE_MAX_IN_FLIGHT_TOTAL) 0: want 1 to 65536",
			"--effect-attempts (SHARDPIPE_EFFECT_ATTEMPTS) 101: want 1 to 100", `--on-effect-failure (SHARDPIPE_ON_EFFECT_FAILURE) "skip": want dlq or stop`},
			InFlight{PerPartition: 4097, Given: true, Attempts: 101}},
	}
	for _, tt := range tests {
		var ic InFlight
		checkProblems(t, tt.args, load(t, InFlightGroup(&ic), tt.args...), tt.want...)
		if ic != tt.ic {
			t.Errorf("%q: loaded %+v, want %+v", tt.args, ic, tt.ic)
		}
		if n := len(ic.Options()); n != 3 && !ic.StopOnFailure || n != 4 && ic.StopOnFailure {
			t.Errorf("%q: %d options", tt.args, n)
		}
	}
}

func TestProduceGroup(t *testing.T) {
	tests := []struct {
		args  []string
		want  []string
		check func(Produce) bool
	}{
		{nil, nil, func(p Produce) bool {
			return p.Gen.Count == 1000 && p.Gen.Seed >= 1 && p.Gen.Seed <= 1<<31 && p.Replication == -1 && p.Delivery == 30*time.Second
		}},
		{[]string{"--seed=42", "--count=3", "--duplicates=0.5", "--partitions=4", "--replication-factor=3", "--rate=9"}, nil, func(p Produce) bool {
			return p.Gen.Seed == 42 && p.Gen.Count == 3 && p.Gen.Duplicates == 0.5 && p.Partitions == 4 && p.Replication == 3 && p.Rate == 9
		}},
		{[]string{"--from-file=-", "--summary-json=out.json"}, nil, func(p Produce) bool { return p.From == "-" && p.Summary == "out.json" }},
		{[]string{"--from-file=x.jsonl", "--seed=1"}, []string{"--from-file (SHARDPIPE_FROM_FILE): reads orders from a file; drop --count"}, nil},
		{[]string{"--count=-1", "--duplicates=11", "--rate=-1", "--partitions=100001", "--replication-factor=0", "--delivery-timeout=0s"}, []string{
			"--count (SHARDPIPE_COUNT) -1: want 0 to 1000000000", "--duplicates (SHARDPIPE_DUPLICATES) 11: want 0 to 10 (a ratio of --count)",
			"--rate (SHARDPIPE_RATE) -1: want 0 to 10000000 (0: unlimited)", "--partitions (SHARDPIPE_PARTITIONS) 100001: want 0 to 100000 (0: the topic must exist)",
			"--replication-factor (SHARDPIPE_REPLICATION_FACTOR) 0: want -1 (the broker's default) or 1 to 32767",
			"--delivery-timeout (SHARDPIPE_DELIVERY_TIMEOUT) 0s: want 1ms to 1h"}, nil},
	}
	for _, tt := range tests {
		var p Produce
		checkProblems(t, tt.args, load(t, ProduceGroup(&p), tt.args...), tt.want...)
		if tt.check != nil && !tt.check(p) {
			t.Errorf("%q: loaded %+v", tt.args, p)
		}
	}
}

func TestDemoGroup(t *testing.T) {
	var d Demo
	if bad := load(t, d.Groups()[0], "--group-protocol=consumer", "--rebalance-orders=30"); len(bad) > 0 ||
		d != (Demo{Protocol: pipeline.Consumer, Orders: 30, Timeout: 2 * time.Minute}) {
		t.Errorf("loaded %+v, problems %q", d, bad)
	}
	args := []string{"--group-protocol=eager", "--rebalance-orders=29", "--timeout=0s"}
	checkProblems(t, args, load(t, DemoGroup(&d), args...), `--group-protocol (SHARDPIPE_GROUP_PROTOCOL) "eager": want classic or consumer`,
		"--rebalance-orders (SHARDPIPE_REBALANCE_ORDERS) 29: want 30 to 100000", "--timeout (SHARDPIPE_TIMEOUT) 0s: want 1ms to 1h")
}

func TestDurabilityGroup(t *testing.T) {
	var dc admin.DurabilityConfig
	args := []string{"--redis-replicas=2", "--redis-allow-eviction"}
	if bad := load(t, DurabilityGroup(&dc), args...); len(bad) > 0 || dc.Replicas != 2 || !dc.AllowEviction || dc.AllowNoPersistence {
		t.Errorf("%q: loaded %+v, problems %q", args, dc, bad)
	}
	args = []string{"--redis-replicas=-1"}
	checkProblems(t, args, load(t, DurabilityGroup(&dc), args...), "--redis-replicas (SHARDPIPE_REDIS_REPLICAS) -1: want 0 to 100")
}

// TestFlagsDefinedOnce: no two groups define one flag name, so each can
// be composed with the others into one command.
func TestFlagsDefinedOnce(t *testing.T) {
	var l Ledger
	var h HTTP
	var dc admin.DurabilityConfig
	var cc Commit
	var ic InFlight
	var cluster, on bool
	seen := map[string]bool{}
	for _, g := range []cliflags.Group{LedgerGroup(&l, &cluster), HTTPGroup(&h, &on), DurabilityGroup(&dc), CommitGroup(&cc), InFlightGroup(&ic)} {
		for _, f := range g.Flags {
			if n := f.Names()[0]; seen[n] {
				t.Errorf("flag %s defined twice", n)
			} else {
				seen[n] = true
			}
		}
	}
	if !seen[FlagLedgerPrefix] || !seen[FlagCommitEvery] || !seen[FlagAllowEviction] {
		t.Errorf("flags %v lack an exported name", seen)
	}
}
