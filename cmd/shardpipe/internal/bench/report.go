package bench

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/shardpipe/shardpipe/internal/kafkainfo"
)

// Stat is the median of several rounds with their min and max.
type Stat struct {
	Median float64 `json:"median"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
}

func statOf(xs []float64) Stat {
	if len(xs) == 0 {
		return Stat{}
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	m := s[len(s)/2]
	if len(s)%2 == 0 {
		m = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return Stat{Median: m, Min: s[0], Max: s[len(s)-1]}
}

// ModeReport is one mode over its rounds.
type ModeReport struct {
	Mode            Mode   `json:"mode"`
	Letter          string `json:"letter"`
	Label           string `json:"label"`
	Rounds          int    `json:"rounds"`
	Records         int64  `json:"records"` // per round (median)
	RecordsPerSec   Stat   `json:"records_per_sec"`
	CPUSecPerM      Stat   `json:"cpu_seconds_per_million"`
	MaxRSSMB        Stat   `json:"peak_rss_mb"`
	AllocsPerRecord Stat   `json:"allocs_per_record"`
	BytesPerRecord  Stat   `json:"alloc_bytes_per_record"`
	// RedisCPUSecPerM is what Redis's main thread spent per million
	// records, and RedisBusy the share of the timed window it was busy
	// (its time over the child's life / the window: near 1, Redis was the
	// bottleneck); zero for a mode that does not use Redis or where INFO
	// could not be read.
	RedisCPUSecPerM Stat `json:"redis_cpu_seconds_per_million"`
	RedisBusy       Stat `json:"redis_busy"`
}

// Ratios compare the modes' median throughputs.
type Ratios struct {
	DOverCeiling float64 `json:"d_over_ceiling"` // d / min(a, b), target >= 0.85
	// DOverLedger is d / k: the pipeline against what the ledger's batch
	// script gets from Redis with no Kafka, target >= 0.9.
	DOverLedger float64 `json:"d_over_ledger"`
	// RedisDOverLedger is (d)'s Redis CPU per record over (k)'s: near 1,
	// the pipeline costs Redis what the ledger alone does, and where Redis
	// is busy all through both (RedisBusy), d / k is the ratio of Redis's
	// speed in the two rounds, for reading.
	RedisDOverLedger float64 `json:"redis_cpu_per_record_d_over_k"`
	// LedgerOverSink is k / b: the batch script against plain SET NX of
	// the same keys and value sizes, what Lua costs Redis, for reading.
	LedgerOverSink float64 `json:"ledger_over_sink"`
	DOverNaive     float64 `json:"d_over_naive"` // d / c, target >= 10
	EOverD         float64 `json:"e_over_d"`
	EOverScripted  float64 `json:"e_over_scripted"` // e / j, totals / the scripted ceiling, target >= 0.8
	FOverCeiling   float64 `json:"f_over_ceiling"`  // f / min(a, b), target >= 0.8
	HOverG         float64 `json:"h_over_g"`        // guard mode, in flight / sequential, target >= 20
	HOverI         float64 `json:"h_over_i"`        // guard mode, delayed / 0ms receiver, target >= 0.5
	// The SQL modes, for reading: n / l is --effect sql against what
	// PostgreSQL takes of the same inserts batched, m / l what the inbox
	// costs that ceiling, n / m the effect against the ceiling with the
	// inbox (what per-record transactions, Kafka and the guard cost).
	SQLOverCeiling   float64 `json:"n_over_pg_ceiling"`
	InboxOverCeiling float64 `json:"m_over_pg_ceiling"`
	SQLOverInbox     float64 `json:"n_over_pg_inbox"`
	// o / n: --effect sql in batches (one transaction per batch) against
	// its default in flight (one per record); o / m the batches against
	// the ceiling with the inbox.
	BatchesOverSQL   float64 `json:"o_over_sql_effect"`
	BatchesOverInbox float64 `json:"o_over_pg_inbox"`
}

// Target is one figure of the run (a median) against its bound: the
// performance targets of the ratios, the CPU and allocations per record
// and the latency.
type Target struct {
	Name   string  `json:"name"`
	Value  float64 `json:"value"`   // 0 when its modes were not measured
	Bound  float64 `json:"bound"`   // 0: no target, the figure is for reading
	AtMost bool    `json:"at_most"` // the target is Value <= Bound, else Value >= Bound
	Met    bool    `json:"met"`
}

func target(name string, v, bound float64, atMost bool) Target {
	met := v != 0 && bound != 0 && (atMost && v <= bound || !atMost && v >= bound)
	return Target{Name: name, Value: v, Bound: bound, AtMost: atMost, Met: met}
}

// ratioTargets are the ratios in the order printed, with their targets.
func ratioTargets(q Ratios) []Target {
	return []Target{
		target("d / min(a, b)", q.DOverCeiling, 0.85, false),
		target("d / k (ledger ceiling)", q.DOverLedger, 0.9, false),
		target("Redis CPU/rec, d / k", q.RedisDOverLedger, 0, false),
		target("k / b (script / SET NX)", q.LedgerOverSink, 0, false),
		target("d / c", q.DOverNaive, 10, false),
		target("e / d", q.EOverD, 0, false),
		target("e / j (scripted ceiling)", q.EOverScripted, 0.8, false),
		target("f / min(a, b)", q.FOverCeiling, 0.8, false),
		target("h / g (in flight / seq)", q.HOverG, 20, false),
		target("h / i (delay / 0ms)", q.HOverI, 0.5, false),
		target("m / l (inbox / pg ceil.)", q.InboxOverCeiling, 0, false),
		target("n / l (sql / pg ceiling)", q.SQLOverCeiling, 0, false),
		target("n / m (sql / pg inbox)", q.SQLOverInbox, 0, false),
		target("o / n (batches / in flight)", q.BatchesOverSQL, 0, false),
		target("o / m (batches / pg inbox)", q.BatchesOverInbox, 0, false),
	}
}

// costTargets are the CPU and allocations per record of modes d and e and
// the latency's p99, with their targets.
func costTargets(modes []ModeReport, lat *LatencyReport) []Target {
	var cpuD, allocsD, cpuE, p99 float64
	for _, m := range modes {
		switch m.Mode {
		case Shardpipe:
			cpuD, allocsD = m.CPUSecPerM.Median, m.AllocsPerRecord.Median
		case Totals:
			cpuE = m.CPUSecPerM.Median
		}
	}
	if lat != nil {
		p99 = lat.P99ms.Median
	}
	return []Target{
		target("(d) CPU s per 1M", cpuD, 2.0, true),
		target("(d) allocs/record", allocsD, 4, true),
		target("(e) CPU s per 1M", cpuE, 4.0, true),
		target("latency p99 ms", p99, 50, true),
	}
}

// LatencyReport is record timestamp to effect landed at a fixed load.
type LatencyReport struct {
	Rate           int     `json:"offered_records_per_sec"`
	Seconds        float64 `json:"seconds_per_round"`
	CommitInterval string  `json:"commit_interval"`
	Rounds         int     `json:"rounds"`
	P50ms          Stat    `json:"p50_ms"`
	P99ms          Stat    `json:"p99_ms"`
	MaxMs          Stat    `json:"max_ms"`
	// Of which producing: record timestamp to the producer's acknowledgement.
	AckP50ms Stat `json:"produce_ack_p50_ms"`
	AckP99ms Stat `json:"produce_ack_p99_ms"`
}

// Machine says where the run happened.
type Machine struct {
	Cores     int    `json:"cores"`
	GoVersion string `json:"go_version"`
	OSArch    string `json:"os_arch"`
	Kafka     string `json:"kafka"`
	Redis     string `json:"redis"`
	LoadAvg   string `json:"load_average"` // at the end of the run, 1/5/15 minutes
}

// Report is a whole run.
type Report struct {
	Machine    Machine `json:"machine"`
	Topic      string  `json:"topic"`
	Records    int     `json:"records"`
	Partitions int32   `json:"partitions"`
	// CommitEvery is set when d, e and f ran with another commit count
	// than the pipeline's default.
	CommitEvery int `json:"commit_every,omitempty"`
	// SQLRecords is the orders per round of the SQL modes (l, m, n): the
	// first of the topic (n: in a topic of them alone); 0 when they were
	// not measured.
	SQLRecords int          `json:"sql_records,omitempty"`
	Modes      []ModeReport `json:"modes"`
	Ratios     Ratios       `json:"ratios"`
	// Targets are the ratios that have one and the costs, against them.
	Targets []Target          `json:"targets"`
	Latency *LatencyReport    `json:"latency,omitempty"`
	Raw     map[Mode][]Result `json:"raw"`
}

var labels = map[Mode][2]string{
	Consume:   {"a", "consume ceiling (franz-go, no sink)"},
	Sink:      {"b", "sink ceiling (pipelined SET NX EX)"},
	Scripted:  {"j", "scripted sink ceiling (ledger + totals, no Kafka)"},
	Ledger:    {"k", "ledger ceiling (record-mode batch script, no Kafka)"},
	Naive:     {"c", "naive (SETNX + sync commit per record)"},
	Shardpipe: {"d", "shardpipe, record mode, defaults"},
	Totals:    {"e", "shardpipe, totals effect"},
	Replay:    {"f", "shardpipe replay, all suppressed"},
	// The guard modes' labels say their delay and MaxInFlight (guardLabels).
	GuardSeq:      {"g", "guard mode, HTTP, batches in turn"},
	GuardInFlight: {"h", "guard mode, HTTP, max in flight"},
	GuardFast:     {"i", "guard mode, HTTP, max in flight, 0ms receiver"},
	PGCeiling:     {"l", "PostgreSQL ceiling (INSERTs batched, no Kafka)"},
	PGInbox:       {"m", "PostgreSQL ceiling + inbox INSERT per order"},
	SQLEffect:     {"n", "shardpipe, --effect sql, run's defaults"},
	SQLBatches:    {"o", "shardpipe, --effect sql, --max-in-flight 0"},
}

// guardLabel is m's label with the run's delay and MaxInFlight.
func guardLabel(cfg Config, m Mode) string {
	switch m {
	case GuardSeq:
		return fmt.Sprintf("guard, HTTP %v, max in flight 1, %dp", cfg.GuardDelay, cfg.GuardPartitions)
	case GuardInFlight:
		return fmt.Sprintf("guard, HTTP %v, max in flight %d, %dp", cfg.GuardDelay, cfg.GuardInFlight, cfg.GuardPartitions)
	case GuardFast:
		return fmt.Sprintf("guard, HTTP 0ms, max in flight %d, %dp", cfg.GuardInFlight, cfg.GuardPartitions)
	}
	return labels[m][1]
}

// newReport folds the rounds into medians and ratios.
func newReport(cfg Config, results map[Mode][]Result, lat []Result) Report {
	r := Report{Topic: cfg.Topic, CommitEvery: cfg.CommitEvery, Records: cfg.Records, Partitions: cfg.Partitions,
		Raw: results}
	med, redisMed := map[Mode]float64{}, map[Mode]float64{}
	for _, m := range []Mode{Consume, Sink, Ledger, Scripted, Naive, Shardpipe, Totals, Replay, GuardSeq, GuardInFlight, GuardFast, PGCeiling, PGInbox, SQLEffect, SQLBatches} {
		rs := results[m]
		if len(rs) == 0 {
			continue
		}
		var rps, cpu, rss, al, by, n, rcpu, busy []float64
		for _, x := range rs {
			if x.RedisCPUSeconds > 0 {
				rcpu = append(rcpu, x.RedisCPUSeconds/float64(x.Records)*1e6)
				busy = append(busy, x.RedisCPUSeconds/x.Seconds)
			}
			rps = append(rps, x.RecordsPerSec())
			cpu = append(cpu, x.CPUSeconds/float64(x.Records)*1e6)
			rss = append(rss, x.MaxRSSMB)
			al = append(al, float64(x.Allocs)/float64(x.Records))
			by = append(by, float64(x.AllocBytes)/float64(x.Records))
			n = append(n, float64(x.Records))
		}
		mr := ModeReport{Mode: m, Letter: labels[m][0], Label: guardLabel(cfg, m), Rounds: len(rs),
			Records: int64(statOf(n).Median), RecordsPerSec: statOf(rps), CPUSecPerM: statOf(cpu),
			MaxRSSMB: statOf(rss), AllocsPerRecord: statOf(al), BytesPerRecord: statOf(by)}
		if len(rcpu) == len(rs) { // every round has it, or the figure would mix
			mr.RedisCPUSecPerM, mr.RedisBusy = statOf(rcpu), statOf(busy)
		}
		med[m], redisMed[m] = mr.RecordsPerSec.Median, mr.RedisCPUSecPerM.Median
		r.Modes = append(r.Modes, mr)
		if IsSQL(m) {
			r.SQLRecords = cfg.SQLRecords
		}
	}
	ceiling := min(med[Consume], med[Sink])
	if med[Consume] == 0 || med[Sink] == 0 { // one of them not measured
		ceiling = max(med[Consume], med[Sink])
	}
	div := func(a, b float64) float64 {
		if b == 0 {
			return 0
		}
		return a / b
	}
	r.Ratios = Ratios{DOverCeiling: div(med[Shardpipe], ceiling), DOverNaive: div(med[Shardpipe], med[Naive]),
		DOverLedger: div(med[Shardpipe], med[Ledger]), RedisDOverLedger: div(redisMed[Shardpipe], redisMed[Ledger]), LedgerOverSink: div(med[Ledger], med[Sink]),
		EOverD: div(med[Totals], med[Shardpipe]), EOverScripted: div(med[Totals], med[Scripted]), FOverCeiling: div(med[Replay], ceiling),
		HOverG: div(med[GuardInFlight], med[GuardSeq]), HOverI: div(med[GuardInFlight], med[GuardFast]),
		SQLOverCeiling: div(med[SQLEffect], med[PGCeiling]), InboxOverCeiling: div(med[PGInbox], med[PGCeiling]),
		SQLOverInbox: div(med[SQLEffect], med[PGInbox]), BatchesOverSQL: div(med[SQLBatches], med[SQLEffect]),
		BatchesOverInbox: div(med[SQLBatches], med[PGInbox])}
	if len(lat) > 0 {
		var p50, p99, mx, a50, a99 []float64
		for _, x := range lat {
			p50, p99, mx = append(p50, x.P50ms), append(p99, x.P99ms), append(mx, x.MaxMs)
			a50, a99 = append(a50, x.AckP50ms), append(a99, x.AckP99ms)
		}
		r.Latency = &LatencyReport{Rate: cfg.LatencyRate, Seconds: cfg.LatencyDuration.Seconds(),
			CommitInterval: cfg.LatencyCommit.String(), Rounds: len(lat),
			P50ms: statOf(p50), P99ms: statOf(p99), MaxMs: statOf(mx), AckP50ms: statOf(a50), AckP99ms: statOf(a99)}
		r.Raw[Latency] = lat
	}
	for _, t := range append(ratioTargets(r.Ratios), costTargets(r.Modes, r.Latency)...) {
		if t.Bound != 0 {
			r.Targets = append(r.Targets, t)
		}
	}
	return r
}

// machine describes this machine and the servers.
func machine(ctx context.Context, cfg Config) Machine {
	m := Machine{Cores: runtime.NumCPU(), GoVersion: runtime.Version(), OSArch: runtime.GOOS + "/" + runtime.GOARCH,
		Kafka: "unknown", Redis: "unknown", LoadAvg: "unknown"}
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		if f := strings.Fields(string(b)); len(f) >= 3 {
			m.LoadAvg = strings.Join(f[:3], " ")
		}
	}
	if cl, err := kgo.NewClient(cfg.seeds()...); err == nil {
		if v, err := kafkainfo.BrokerVersion(ctx, kadm.NewClient(cl)); err == nil {
			m.Kafka = v
		}
		cl.Close()
	}
	if rdb, err := NewRedis(cfg.Redis); err == nil {
		if info, err := rdb.Info(ctx, "server").Result(); err == nil {
			m.Redis = infoField(info, "redis_version")
		}
		rdb.Close()
	}
	return m
}
