package bench

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/shardpipe/shardpipe/secure"
)

// Mode names one measurement.
type Mode string

// The modes, in the order of the table.
const (
	Consume   Mode = "consume"   // (a) franz-go in a group, no sink
	Sink      Mode = "sink"      // (b) pipelined SET NX EX straight into Redis
	Scripted  Mode = "scripted"  // (j) the Ledger with the totals effect (its batch script) straight into Redis, no Kafka
	Ledger    Mode = "ledger"    // (k) the Ledger in record mode (its batch claim script) straight into Redis, no Kafka
	Naive     Mode = "naive"     // (c) one SETNX and one synchronous commit per record
	Shardpipe Mode = "shardpipe" // (d) the pipeline, record mode, defaults
	Totals    Mode = "totals"    // (e) the pipeline with the totals effect
	Replay    Mode = "replay"    // (f) the pipeline over keys all claimed already
	Latency   Mode = "latency"   // the pipeline at a fixed offered load
)

// Spec is what one child process measures. The parent passes it as JSON.
type Spec struct {
	Mode    Mode     `json:"mode"`
	Brokers []string `json:"brokers"`
	// Kafka is the brokers' TLS and SASL settings: files by path and the
	// name of the password's variable, which the worker inherits, so that
	// no secret is in the spec (a command-line argument).
	Kafka secure.KafkaValues `json:"kafka"`
	// kafka are Kafka's options as RunWorker made them.
	kafka   []kgo.Opt
	Redis   string        `json:"redis"`
	Topic   string        `json:"topic"`
	Records int           `json:"records"` // records to process (naive: at most)
	Group   string        `json:"group"`
	Prefix  string        `json:"prefix"` // ledger or ceiling key prefix
	TTL     time.Duration `json:"ttl"`
	// CommitEvery, when positive, overrides the pipeline's default commit
	// count (modes d, e and f), to see what the default costs.
	CommitEvery int `json:"commit_every,omitempty"`
	// Naive: stop after this long even if Records are not done.
	Budget time.Duration `json:"budget,omitempty"`
	// Latency: offered load, how long, and the commit interval.
	Rate           int           `json:"rate,omitempty"`
	Duration       time.Duration `json:"duration,omitempty"`
	CommitInterval time.Duration `json:"commit_interval,omitempty"`
	Partitions     int           `json:"partitions,omitempty"`
	// Guard modes: the receiver's URL and the pipeline's MaxInFlight.
	URL         string `json:"url,omitempty"`
	MaxInFlight int    `json:"max_in_flight,omitempty"`
	// SQL modes: the database's URL (without a password) and the file of
	// its password ("": the worker reads SHARDPIPE_SQL_PASSWORD or
	// PGPASSWORD, inherited, as run does), the round's bench table and its
	// inbox ("" for l).
	SQLURL          string `json:"sql_url,omitempty"`
	SQLPasswordFile string `json:"sql_password_file,omitempty"`
	Table           string `json:"table,omitempty"`
	Inbox           string `json:"inbox,omitempty"`
	// Profiles to write, empty for none.
	CPUProfile string `json:"cpu_profile,omitempty"`
	MemProfile string `json:"mem_profile,omitempty"`
}

// Result is what a child reports on stdout, completed by the parent with
// what the operating system says about the child.
type Result struct {
	Mode       Mode    `json:"mode"`
	Records    int64   `json:"records"`
	Seconds    float64 `json:"seconds"` // first record in to last effect landed
	Allocs     uint64  `json:"allocs"`  // heap objects allocated by the whole child
	AllocBytes uint64  `json:"alloc_bytes"`
	Applied    int64   `json:"applied,omitempty"`
	Suppressed int64   `json:"suppressed,omitempty"`
	// Latency mode: record timestamp to effect landed, in milliseconds.
	P50ms float64 `json:"p50_ms,omitempty"`
	P99ms float64 `json:"p99_ms,omitempty"`
	MaxMs float64 `json:"max_ms,omitempty"`
	// Latency mode: record timestamp to the producer's acknowledgement.
	AckP50ms float64 `json:"ack_p50_ms,omitempty"`
	AckP99ms float64 `json:"ack_p99_ms,omitempty"`
	// Peak resident set (VmHWM) as the child read it, else from its rusage.
	MaxRSSMB float64 `json:"max_rss_mb"`
	// Filled by the parent from the child's rusage.
	CPUSeconds float64 `json:"cpu_seconds"`
	// RedisCPUSeconds is the time Redis's main thread ran over the child's
	// life (INFO cpu before and after it), filled by the parent for the
	// modes that use Redis; 0 when INFO could not be read.
	RedisCPUSeconds float64 `json:"redis_cpu_seconds,omitempty"`
	// SQL modes, filled by the parent from the round's tables once the
	// child is done: the bench table's rows and the inbox's.
	Rows      int64 `json:"rows,omitempty"`
	InboxRows int64 `json:"inbox_rows,omitempty"`
}

// RecordsPerSec is the measured throughput.
func (r Result) RecordsPerSec() float64 {
	if r.Seconds <= 0 {
		return 0
	}
	return float64(r.Records) / r.Seconds
}

func (s Spec) validate() error {
	noKafka := s.Mode == Sink || s.Mode == Scripted || s.Mode == Ledger || s.Mode == PGCeiling || s.Mode == PGInbox
	noRedis := s.Mode == Consume || s.Mode == PGCeiling || s.Mode == PGInbox
	switch {
	case len(s.Brokers) == 0 && !noKafka:
		return fmt.Errorf("bench worker %s: no brokers", s.Mode)
	case s.Redis == "" && !noRedis:
		return fmt.Errorf("bench worker %s: no redis", s.Mode)
	case s.Records < 1 && s.Mode != Latency:
		return fmt.Errorf("bench worker %s: records %d, want at least 1", s.Mode, s.Records)
	case s.TTL <= 0 && !noRedis:
		return fmt.Errorf("bench worker %s: ttl %v, want > 0", s.Mode, s.TTL)
	case IsSQL(s.Mode) && (s.SQLURL == "" || s.Table == ""):
		return fmt.Errorf("bench worker %s: no PostgreSQL URL or table", s.Mode)
	case (s.Mode == PGInbox || isSQLEffect(s.Mode)) && s.Inbox == "":
		return fmt.Errorf("bench worker %s: no inbox table", s.Mode)
	}
	return nil
}

// seeds are the options of a client of the brokers: TLS, SASL and the
// seed brokers, then more.
func (s Spec) seeds(more ...kgo.Opt) []kgo.Opt {
	return append(append(slices.Clone(s.kafka), kgo.SeedBrokers(s.Brokers...)), more...)
}

// NewRedis returns a client for host:port or a redis:// URL.
func NewRedis(spec string) (*redis.Client, error) {
	if strings.Contains(spec, "://") {
		o, err := redis.ParseURL(spec)
		if err != nil {
			// go-redis's error may quote a value of the URL: not printed.
			return nil, fmt.Errorf("bench: redis %q: not a Redis URL go-redis takes", secure.RedactURL(spec))
		}
		o.ContextTimeoutEnabled = true
		return redis.NewClient(o), nil
	}
	return redis.NewClient(&redis.Options{Addr: spec, ContextTimeoutEnabled: true}), nil
}
