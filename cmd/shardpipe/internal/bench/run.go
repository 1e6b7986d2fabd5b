package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/shardpipe/shardpipe/secure"
)

// Config is one bench run.
type Config struct {
	Brokers []string
	// Kafka is the brokers' TLS and SASL settings, the parent's and, in
	// their spec, the workers' (Spec.Kafka: no secret in it).
	Kafka      secure.KafkaValues
	kafka      []kgo.Opt // Kafka's options, made by Run
	Redis      string
	Topic      string // pre-filled topic to use
	Recreate   bool   // delete and refill Topic when it holds another count
	Records    int
	Partitions int32
	Rounds     int
	// Naive baseline: a bounded prefix of the topic.
	NaiveRecords int
	NaiveBudget  time.Duration
	// Latency: offered load, duration per round, commit interval.
	LatencyRate     int
	LatencyDuration time.Duration
	LatencyCommit   time.Duration
	// CommitEvery, when positive, replaces the pipeline's default commit
	// count in modes d, e and f (the report is then not of the defaults).
	CommitEvery int
	// Guard modes g, h and i: records of h and i (g takes a twentieth)
	// in a topic of their own of GuardPartitions partitions, the
	// receiver's delay in g and h, and h's and i's MaxInFlight.
	GuardRecords    int
	GuardDelay      time.Duration
	GuardInFlight   int
	GuardPartitions int32
	// SQL modes l to o: the PostgreSQL database's URL, without a
	// password (as run's --sql-url; "": the SQL modes are skipped), the
	// file of its password ("": SHARDPIPE_SQL_PASSWORD or PGPASSWORD, as
	// run takes it), and the orders per round: the first SQLRecords of the
	// topic (n's transaction per record is too slow for the whole topic;
	// n reads them from a topic of their own, sqlTopic).
	SQLURL          string
	SQLPasswordFile string
	SQLRecords      int
	// Modes to measure, in any order; empty means all. Replay needs
	// Shardpipe (its rounds claim the keys) and brings it in.
	Modes []Mode
	// ProfileDir, when set, receives CPU and allocation profiles of each
	// mode's first round.
	ProfileDir string
	// Exe and Args start a worker: Exe Args... SPEC-JSON ("": this binary).
	Exe    string
	Args   []string
	Stderr io.Writer // the workers' logs
	Log    *slog.Logger
}

// Validate names every bad setting.
func (c Config) Validate() error {
	var errs []error
	check := func(bad bool, format string, a ...any) {
		if bad {
			errs = append(errs, fmt.Errorf(format, a...))
		}
	}
	check(len(c.Brokers) == 0, "no brokers")
	check(c.Redis == "", "no redis")
	check(c.Topic == "", "no topic")
	check(c.Records < 1000, "records %d: want at least 1000", c.Records)
	check(c.Partitions < 1, "partitions %d: want at least 1", c.Partitions)
	check(c.Rounds < 1, "rounds %d: want at least 1", c.Rounds)
	check(c.NaiveRecords < 1 || c.NaiveBudget <= 0, "naive records %d and budget %v: want both positive", c.NaiveRecords, c.NaiveBudget)
	check(c.LatencyRate < 0 || c.LatencyDuration < 0, "latency rate %d and duration %v: want both >= 0", c.LatencyRate, c.LatencyDuration)
	check(c.LatencyRate > 0 && c.LatencyCommit <= 0, "latency commit interval %v: want > 0", c.LatencyCommit)
	check(c.GuardRecords < 0, "guard records %d: want at least 0", c.GuardRecords)
	check(c.GuardDelay < 0 || c.GuardDelay > time.Second, "guard delay %v: want 0 to 1s", c.GuardDelay)
	check(c.GuardRecords > 0 && (c.GuardInFlight < 1 || c.GuardInFlight > 4096), "guard in flight %d: want 1 to 4096", c.GuardInFlight)
	check(c.GuardRecords > 0 && c.GuardPartitions < 1, "guard partitions %d: want at least 1", c.GuardPartitions)
	check(c.SQLURL != "" && c.SQLRecords < 1, "sql records %d: want at least 1", c.SQLRecords)
	check(c.SQLURL == "" && slices.ContainsFunc(c.Modes, IsSQL), "modes l to o need a PostgreSQL URL")
	return errors.Join(errs...)
}

// seeds are the options of a client of the brokers: TLS, SASL and the
// seed brokers.
func (c Config) seeds() []kgo.Opt {
	return append(slices.Clone(c.kafka), kgo.SeedBrokers(c.Brokers...))
}

// ttl of every key a bench writes: long enough for the run, short enough
// that a crashed run cleans up after itself.
const ttl = time.Hour

// Run pre-fills the topic, then measures every mode Rounds times, the modes
// interleaved round by round so that load from elsewhere spreads over all
// of them, and the latency mode last.
func Run(ctx context.Context, cfg Config) (Report, error) {
	if err := cfg.Validate(); err != nil {
		return Report{}, err
	}
	var err error
	if cfg.kafka, err = cfg.Kafka.Opts(); err != nil {
		return Report{}, fmt.Errorf("bench: kafka: %w", err)
	}
	if cfg.Exe == "" {
		exe, err := os.Executable()
		if err != nil {
			return Report{}, fmt.Errorf("bench: cannot find this binary to start workers: %w", err)
		}
		cfg.Exe = exe
	}
	if cfg.ProfileDir != "" {
		if err := os.MkdirAll(cfg.ProfileDir, 0o755); err != nil {
			return Report{}, fmt.Errorf("bench: %w", err)
		}
	}
	log := cfg.Log
	pg, err := cfg.openSQL(ctx) // before the topic: a database that does not answer ends the run at once
	if err != nil {
		return Report{}, err
	}
	if pg != nil {
		defer pg.close()
	}
	if err := Prefill(ctx, cfg.seeds(), cfg.Topic, cfg.Partitions, cfg.Records, cfg.Recreate, log); err != nil {
		return Report{}, err
	}
	if pg != nil && (cfg.wants(SQLEffect) || cfg.wants(SQLBatches)) {
		if err := Prefill(ctx, cfg.seeds(), cfg.sqlTopic(), cfg.Partitions, cfg.SQLRecords, true, log); err != nil {
			return Report{}, err
		}
	}
	run := strconv.FormatInt(time.Now().UnixNano(), 36)
	results := map[Mode][]Result{}
	var rcv *receiver
	if cfg.GuardRecords > 0 && slices.ContainsFunc(guardModes, cfg.wants) {
		var err error
		if rcv, err = startReceiver(); err != nil {
			return Report{}, err
		}
		defer rcv.close()
		if err := Prefill(ctx, cfg.seeds(), cfg.guardTopic(), cfg.GuardPartitions, cfg.GuardRecords, true, log); err != nil {
			return Report{}, err
		}
	}
	base := Spec{Brokers: cfg.Brokers, Kafka: cfg.Kafka, Redis: cfg.Redis, Topic: cfg.Topic, Records: cfg.Records, TTL: ttl,
		CommitEvery: cfg.CommitEvery}
	for round := range cfg.Rounds {
		tag := fmt.Sprintf("%s-%d", run, round)
		var claimed string // the shardpipe round's prefix, for the replay
		for _, m := range []Mode{Consume, Sink, Ledger, Scripted, Naive, Shardpipe, Replay, Totals, GuardSeq, GuardInFlight, GuardFast, PGCeiling, PGInbox, SQLEffect, SQLBatches} {
			if !cfg.wants(m) || isGuard(m) && rcv == nil || IsSQL(m) && pg == nil {
				continue
			}
			spec := base
			spec.Mode, spec.Group = m, "shardpipe-bench-"+tag+"-"+string(m)
			spec.Prefix = "shardpipe-bench:" + tag + ":" + string(m) + ":"
			switch m {
			case Naive:
				spec.Records, spec.Budget = min(cfg.NaiveRecords, cfg.Records), cfg.NaiveBudget
			case Shardpipe:
				claimed = spec.Prefix
			case Replay:
				spec.Prefix = claimed
			case GuardSeq, GuardInFlight, GuardFast:
				spec = cfg.guardSpec(spec, rcv.addr)
			case PGCeiling, PGInbox, SQLEffect, SQLBatches:
				spec = cfg.sqlSpec(spec, tag)
				if err := pg.create(ctx, spec); err != nil {
					return Report{}, err
				}
			}
			if cfg.ProfileDir != "" && round == 0 {
				spec.CPUProfile = filepath.Join(cfg.ProfileDir, string(m)+".cpu.pprof")
				spec.MemProfile = filepath.Join(cfg.ProfileDir, string(m)+".allocs.pprof")
			}
			log.Info("bench: measuring", "mode", m, "round", round+1, "of", cfg.Rounds)
			var before float64
			redisOK := false
			if usesRedis(m) {
				before, redisOK = redisCPU(ctx, cfg.Redis)
			}
			res, err := spawn(ctx, cfg, spec)
			if redisOK && err == nil {
				if after, ok := redisCPU(ctx, cfg.Redis); ok {
					res.RedisCPUSeconds = after - before
				}
			}
			if IsSQL(m) { // counts the tables' rows, then drops them
				res, err = pg.finish(ctx, spec, res, err)
			}
			if err != nil {
				return Report{}, err
			}
			if err := check(spec, res); err != nil {
				return Report{}, err
			}
			log.Info("bench: measured", "mode", m, "round", round+1, "records", res.Records,
				"records_per_sec", int64(res.RecordsPerSec()), "cpu_seconds", res.CPUSeconds, "max_rss_mb", res.MaxRSSMB)
			results[m] = append(results[m], res)
			// Consume writes nothing; the naive consumer's keys are some
			// records of each partition, found by SCAN; the shardpipe
			// round's keys stay for the replay, which cleans them.
			switch m {
			case Naive, GuardSeq, GuardInFlight, GuardFast, SQLEffect, SQLBatches: // the first records of each partition
				err = Clean(ctx, cfg.Redis, spec.Prefix, -1)
			case Sink, Ledger, Scripted, Replay, Totals:
				err = Clean(ctx, cfg.Redis, spec.Prefix, cfg.Records)
			case Shardpipe:
				if !cfg.wants(Replay) {
					err = Clean(ctx, cfg.Redis, spec.Prefix, cfg.Records)
				}
			}
			if err != nil {
				return Report{}, err
			}
		}
	}
	var lat []Result
	if cfg.wants(Latency) {
		lat, err = runLatencyRounds(ctx, cfg, run)
	}
	if err != nil {
		return Report{}, err
	}
	r := newReport(cfg, results, lat)
	r.Machine = machine(ctx, cfg)
	return r, nil
}

// wants reports whether m is to be measured.
func (c Config) wants(m Mode) bool {
	if len(c.Modes) == 0 {
		return true
	}
	for _, x := range c.Modes {
		if x == m || (m == Shardpipe && x == Replay) {
			return true
		}
	}
	return false
}

// ParseModes reads a comma-separated list of mode names or the issue's
// letters: a consume, b sink, c naive, d shardpipe, e totals, f replay,
// g guard-seq, h guard-inflight, i guard-0ms (guard: all three),
// j scripted, k ledger, l pg-ceiling, m pg-inbox, n sql-effect,
// o sql-batches (sql: all four), and latency.
func ParseModes(s string) ([]Mode, error) {
	var out []Mode
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		if f == "guard" {
			out = append(out, guardModes...)
			continue
		}
		if f == "sql" {
			out = append(out, sqlModes...)
			continue
		}
		m, ok := Mode(f), false
		for mode, l := range labels {
			if f == l[0] || m == mode {
				m, ok = mode, true
			}
		}
		if m == Latency {
			ok = true
		}
		if !ok {
			return nil, fmt.Errorf("mode %q: want a-o, consume, sink, naive, shardpipe, totals, replay, guard-seq, guard-inflight, guard-0ms, guard, scripted, ledger, pg-ceiling, pg-inbox, sql-effect, sql-batches, sql or latency", f)
		}
		out = append(out, m)
	}
	return out, nil
}

// check refuses a round whose counts say it did not measure what it claims.
func check(spec Spec, r Result) error {
	n := int64(spec.Records)
	switch {
	case spec.Mode != Naive && r.Records < n:
		return fmt.Errorf("bench %s: %d of %d records", spec.Mode, r.Records, n)
	case isGuard(spec.Mode) && r.Applied < n:
		return fmt.Errorf("bench %s: %d of %d records applied on a fresh ledger", spec.Mode, r.Applied, n)
	case (spec.Mode == Shardpipe || spec.Mode == Totals || spec.Mode == Sink || spec.Mode == Scripted || spec.Mode == Ledger) && r.Applied != n:
		return fmt.Errorf("bench %s: %d of %d records applied on a fresh ledger", spec.Mode, r.Applied, n)
	case IsSQL(spec.Mode) && r.Applied != n:
		return fmt.Errorf("bench %s: %d of %d orders applied into fresh tables", spec.Mode, r.Applied, n)
	case IsSQL(spec.Mode) && r.Rows != r.Applied:
		return fmt.Errorf("bench %s: table %s holds %d rows for %d records applied", spec.Mode, spec.Table, r.Rows, r.Applied)
	case (spec.Mode == PGInbox || isSQLEffect(spec.Mode)) && r.InboxRows != r.Applied:
		return fmt.Errorf("bench %s: inbox %s holds %d rows for %d records applied", spec.Mode, spec.Inbox, r.InboxRows, r.Applied)
	case spec.Mode == Replay && (r.Applied != 0 || r.Suppressed != n):
		return fmt.Errorf("bench replay: %d applied and %d suppressed, want 0 and %d", r.Applied, r.Suppressed, n)
	case r.Seconds <= 0:
		return fmt.Errorf("bench %s: no time measured", spec.Mode)
	}
	return nil
}

// runLatencyRounds measures the latency mode on a fresh, empty topic.
func runLatencyRounds(ctx context.Context, cfg Config, run string) ([]Result, error) {
	if cfg.LatencyRate == 0 || cfg.LatencyDuration == 0 {
		return nil, nil
	}
	var out []Result
	for round := range cfg.Rounds {
		tag := fmt.Sprintf("%s-%d", run, round)
		topic := cfg.Topic + "-latency-" + tag
		if err := Prefill(ctx, cfg.seeds(), topic, cfg.Partitions, 0, false, cfg.Log); err != nil {
			return nil, err
		}
		spec := Spec{Mode: Latency, Brokers: cfg.Brokers, Kafka: cfg.Kafka, Redis: cfg.Redis, Topic: topic, TTL: ttl,
			Group: "shardpipe-bench-" + tag + "-latency", Prefix: "shardpipe-bench:" + tag + ":latency:",
			Rate: cfg.LatencyRate, Duration: cfg.LatencyDuration, CommitInterval: cfg.LatencyCommit,
			Partitions: int(cfg.Partitions)}
		cfg.Log.Info("bench: measuring", "mode", Latency, "round", round+1, "of", cfg.Rounds, "rate", cfg.LatencyRate)
		res, err := spawn(ctx, cfg, spec)
		derr := DeleteTopic(ctx, cfg.seeds(), topic)
		if err != nil {
			return nil, err
		}
		if derr != nil {
			cfg.Log.Warn("bench: could not delete the latency topic", "topic", topic, "err", derr)
		}
		if err := Clean(ctx, cfg.Redis, spec.Prefix, int(res.Records)); err != nil {
			return nil, err
		}
		cfg.Log.Info("bench: measured", "mode", Latency, "round", round+1, "records", res.Records,
			"p50_ms", res.P50ms, "p99_ms", res.P99ms, "max_ms", res.MaxMs)
		out = append(out, res)
	}
	return out, nil
}
