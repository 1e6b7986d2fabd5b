package pipeline

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/plugin/kotel"

	"github.com/shardpipe/shardpipe/checkpoint"
	"github.com/shardpipe/shardpipe/sink"
)

// Applier is the effect boundary: sink.Ledger in record mode, Guarded for
// external effects. Apply returns one result per record, or an error when the
// batch's effects are unknown (the pipeline then applies it again and does not
// commit past it).
//
// The pipeline also looks for optional interfaces on it: Keyer and
// Finisher, and whether it is Guarded. It looks at the Applier, then down
// its Unwrap chain: an Applier that wraps another keeps these when it is
// built with Wrap, or has a method Unwrap() Applier returning the wrapped
// one (see Wrap); one that only embeds Applier loses them.
type Applier interface {
	// Apply lands the effects of batch, in order, and returns one Result
	// per record at its index: Applied, Suppressed or Redelivered, or a
	// per-record Err (a poison record: sink.ErrNoKey, ErrBadValue,
	// ErrCrossSlot; a refusal no retry fixes: sink.ErrMisconfigured). An
	// error means the batch's effects are unknown: the pipeline applies it
	// again, so Apply must be idempotent per record and term (Record.Epoch,
	// Member, Group). ctx ends when the partition is lost or the run aborts.
	Apply(ctx context.Context, batch []sink.Record) ([]sink.Result, error)
}

// Protocol selects the consumer group protocol.
type Protocol uint8

const (
	// Classic is the classic group protocol with the cooperative-sticky
	// balancer; the epoch is the group generation.
	Classic Protocol = iota
	// Consumer is the KIP-848 consumer protocol (server-side assignment);
	// the epoch is the member epoch. Needs Kafka 4.0+, mature from 4.3.
	Consumer
)

// ParseProtocol reads "classic" or "consumer".
func ParseProtocol(s string) (Protocol, error) {
	switch s {
	case "classic":
		return Classic, nil
	case "consumer":
		return Consumer, nil
	}
	return 0, fmt.Errorf("group protocol %q: want classic or consumer", s)
}

// String returns "classic" or "consumer", as ParseProtocol reads them.
func (p Protocol) String() string {
	if p == Consumer {
		return "consumer"
	}
	return "classic"
}

type config struct {
	brokers        []string
	topics         []string
	group          string
	applier        Applier
	protocol       Protocol
	startEarliest  bool
	policy         checkpoint.Policy // Max is set from maxUncommitted by newConfig
	maxUncommitted int               // 0: the default, 10 x max(Every, maxBatch)
	maxBatch       int
	queueRecords   int
	revokeTimeout  time.Duration
	commitTimeout  time.Duration
	shutdown       time.Duration
	sessionTimeout time.Duration
	poisonAttempts int
	// retry paces the retries of a batch whose effects are unknown, of a
	// failed commit and of a dead-letter write; poison those of a poison
	// record (its Attempts is poisonAttempts). Their ceilings are waited,
	// without jitter.
	retry, poison sink.Backoff
	deadLetters   *deadLetterConfig // nil: a poison record stops the pipeline
	logger        *slog.Logger
	observer      func(Event)
	meter         Meter         // Measure; nil: none
	tracer        *kotel.Tracer // Tracer; nil: none
	instanceID    string        // InstanceID; "": dynamic membership
	kgoOpts       []kgo.Opt
	replayPrefix  string
	replayGiven   string       // PlanGiven
	barrier       Barrier      // BeforeCommit; nil: none
	marks         CommitMarker // CountOnce; nil: none
	// in flight (inflightopts.go): 0 runs batches one after another
	maxInFlight, maxInFlightTotal, effectAttempts int
	stopOnEffectFailure                           bool
}

// GroupOpt is an option of New, a consumer group run. Options that apply to
// a Replay as well are Opt, which is a GroupOpt too; the ones that only make
// sense in a group (Topics, Group, GroupProtocol, StartAtLatest,
// SessionTimeout, RevokeTimeout) are GroupOpt alone, so passing one to
// NewReplay does not compile.
type GroupOpt interface {
	apply(*config)
	groupOpt()
}

// ReplayOpt is an option of NewReplay. Options that apply to a group run as
// well are Opt, which is a ReplayOpt too; the ones that only make sense in a
// replay (CheckpointPrefix, PlanGiven) are ReplayOpt alone, so passing one
// to New does not compile.
type ReplayOpt interface {
	apply(*config)
	replayOpt()
}

// Opt is an option of both New and NewReplay: it is a GroupOpt and a
// ReplayOpt. A []Opt is not a []GroupOpt: pass it as one value with
// Options, or element by element.
type Opt interface {
	GroupOpt
	ReplayOpt
}

// Options bundles opts into one Opt that applies them in order: a list of
// settings built once for both kinds of run (a command's commit policy,
// poison handling, tracing) goes to New or NewReplay as one value, the
// scopes still checked at compile time. It costs nothing past the options
// themselves.
func Options(opts ...Opt) Opt {
	return opt(func(c *config) {
		for _, o := range opts {
			o.apply(c)
		}
	})
}

// The three kinds of option, as kgo scopes its own: each is a func over the
// config with the marker methods of the constructors that accept it.
type (
	opt       func(*config) // New and NewReplay
	groupOpt  func(*config) // New only
	replayOpt func(*config) // NewReplay only
)

func (o opt) apply(c *config)       { o(c) }
func (opt) groupOpt()               {}
func (opt) replayOpt()              {}
func (o groupOpt) apply(c *config)  { o(c) }
func (groupOpt) groupOpt()          {}
func (o replayOpt) apply(c *config) { o(c) }
func (replayOpt) replayOpt()        {}

// Brokers sets the seed brokers (host:port). Required. Repeated calls add.
func Brokers(addrs ...string) Opt {
	return opt(func(c *config) { c.brokers = append(c.brokers, addrs...) })
}

// Topics adds topics for the group to consume. Required; repeated calls add.
// A replay names its one topic in NewReplay instead.
func Topics(topics ...string) GroupOpt {
	return groupOpt(func(c *config) { c.topics = append(c.topics, topics...) })
}

// Group sets the consumer group ID. Required. Its members share the topics'
// partitions, and its committed offsets are where a restart resumes.
func Group(group string) GroupOpt { return groupOpt(func(c *config) { c.group = group }) }

// Sink sets the effect boundary: a sink.Ledger (record mode), Guarded (an
// external effect through a sink.Guard) or any Applier. Required.
func Sink(a Applier) Opt { return opt(func(c *config) { c.applier = a }) }

// GroupProtocol selects Classic (the default) or Consumer (KIP-848).
func GroupProtocol(p Protocol) GroupOpt { return groupOpt(func(c *config) { c.protocol = p }) }

// StartAtLatest makes a group with no committed offset start at the end of
// each partition. The default is the earliest offset: a new group processes
// every retained order.
func StartAtLatest() GroupOpt { return groupOpt(func(c *config) { c.startEarliest = false }) }

// CommitEvery commits after n landed records per partition (default 500;
// 0 turns the count trigger off). Batches are cut so commits fall exactly
// every n records, so n also caps the records of one sink call (with
// MaxBatch). Smaller n means fewer records read again after a crash (the
// ledger suppresses them) and more Redis and commit round trips: at 100 the
// pipeline spends about a third more CPU per record than at 500 (see
// BENCHMARKS.md).
func CommitEvery(n int) Opt { return opt(func(c *config) { c.policy.Every = n }) }

// CommitInterval commits landed records at most d after the first of them
// landed (default 5s; 0 turns the time trigger off). Shorter means fewer
// replays after a crash of an idle partition and more commit round trips.
func CommitInterval(d time.Duration) Opt { return opt(func(c *config) { c.policy.Interval = d }) }

// MaxUncommitted bounds the records of a partition that land past its last
// commit (default 10 x the larger of CommitEvery and MaxBatch; at least
// CommitEvery). Reaching it makes a commit due at once; while commits fail,
// the partition's worker takes no more records (its queue fills and its
// fetching pauses) until one succeeds. It is what a crash re-reads at most
// per partition while commits fail; while they succeed a crash re-reads at
// most CommitEvery records (or CommitInterval worth).
func MaxUncommitted(n int) Opt { return opt(func(c *config) { c.maxUncommitted = n }) }

// MaxBatch caps the records in one sink call (default 500; at least 1). A
// larger batch costs more memory and a longer revoke; a smaller one more
// Redis round trips.
func MaxBatch(n int) Opt { return opt(func(c *config) { c.maxBatch = n }) }

// QueueRecords is the per-partition queue bound (default 4 x MaxBatch; at
// least MaxBatch): a partition whose queue holds more is paused until its
// worker catches up. Memory is bounded by partitions x (QueueRecords + one
// fetch).
func QueueRecords(n int) Opt { return opt(func(c *config) { c.queueRecords = n }) }

// RevokeTimeout bounds how long a revoke waits for a worker's in-flight batch
// (default 20s, keep it below the group's rebalance timeout; positive). A
// worker that misses it is fenced: its later commits fail with
// checkpoint.ErrStaleEpoch.
func RevokeTimeout(d time.Duration) GroupOpt {
	return groupOpt(func(c *config) { c.revokeTimeout = d })
}

// ShutdownTimeout bounds the drain when Run's context ends or Close is
// called (default 30s; positive): a partition still busy then is abandoned
// without its final commit, so nothing past an unlanded record is committed.
func ShutdownTimeout(d time.Duration) Opt { return opt(func(c *config) { c.shutdown = d }) }

// SessionTimeout sets the classic protocol's session timeout (default
// franz-go's 45s). The consumer protocol takes it from the broker. Shorter
// finds a dead member sooner and makes a stalled one lose its partitions
// sooner.
func SessionTimeout(d time.Duration) GroupOpt {
	return groupOpt(func(c *config) { c.sessionTimeout = d })
}

// PoisonAttempts sets how many times in all a poison record (one the sink
// cannot decode: sink.ErrNoKey, ErrBadValue, ErrCrossSlot) is applied, with
// capped backoff between attempts, before it is dead-lettered or stops the
// pipeline (default 3; at least 1). Each extra attempt costs one sink call
// for the batch's poison records and up to 2s of the partition's time. A
// stop that gives up (Close, a revoke) ends the waiting: the record fails
// for good then, with the attempts made.
func PoisonAttempts(n int) Opt { return opt(func(c *config) { c.poisonAttempts = n }) }

// Logger sets the structured logger (default slog.Default()).
func Logger(l *slog.Logger) Opt { return opt(func(c *config) { c.logger = l }) }

// Observe registers fn for every Event. fn runs on the goroutine that caused
// the event and must not block. Default: none.
func Observe(fn func(Event)) Opt { return opt(func(c *config) { c.observer = fn }) }

// KafkaOptions appends raw franz-go options (TLS, SASL, client ID) to every
// client the pipeline or replay makes. Options that change group semantics
// (autocommit, balancers, isolation level) are overridden.
func KafkaOptions(opts ...kgo.Opt) Opt {
	return opt(func(c *config) { c.kgoOpts = append(c.kgoOpts, opts...) })
}

// newConfig applies opts; group runs (New) need topics and a group, replays
// name their topic themselves.
func newConfig[O interface{ apply(*config) }](opts []O, group bool) (config, error) {
	c := config{
		startEarliest:  true,
		policy:         checkpoint.Policy{Every: 500, Interval: 5 * time.Second},
		maxBatch:       500,
		revokeTimeout:  20 * time.Second,
		commitTimeout:  15 * time.Second,
		shutdown:       30 * time.Second,
		poisonAttempts: 3,
		replayPrefix:   DefaultReplayPrefix,
	}
	for _, o := range opts {
		if any(o) != nil {
			o.apply(&c)
		}
	}
	if c.logger == nil {
		c.logger = slog.Default()
	}
	if c.queueRecords == 0 {
		c.queueRecords = 4 * c.maxBatch
	}
	var errs []error
	if len(c.brokers) == 0 {
		errs = append(errs, errors.New("no brokers"))
	}
	if group && len(c.topics) == 0 {
		errs = append(errs, errors.New("no topics"))
	}
	if group && c.group == "" {
		errs = append(errs, errors.New("no group"))
	}
	if c.applier == nil {
		errs = append(errs, errors.New("no sink"))
	}
	if c.policy.Every < 0 || c.policy.Interval < 0 {
		errs = append(errs, fmt.Errorf("commit policy %+v: negative", c.policy))
	}
	switch {
	case c.maxUncommitted < 0:
		errs = append(errs, fmt.Errorf("max uncommitted %d: negative", c.maxUncommitted))
	case c.maxUncommitted == 0:
		c.policy.Max = 10 * max(c.policy.Every, c.maxBatch)
	case c.maxUncommitted < c.policy.Every:
		errs = append(errs, fmt.Errorf("max uncommitted %d is below commit every %d: want at least it", c.maxUncommitted, c.policy.Every))
	default:
		c.policy.Max = c.maxUncommitted
	}
	if c.maxBatch < 1 || c.queueRecords < c.maxBatch {
		errs = append(errs, fmt.Errorf("max batch %d and queue %d: want 1 <= batch <= queue", c.maxBatch, c.queueRecords))
	}
	c.retry = sink.Backoff{Initial: 100 * time.Millisecond, Max: 5 * time.Second}
	c.poison = sink.Backoff{Initial: 100 * time.Millisecond, Max: 2 * time.Second, Attempts: c.poisonAttempts}
	errs = append(errs, c.validateInFlight()...)
	if c.poisonAttempts < 1 {
		errs = append(errs, fmt.Errorf("poison attempts %d: want at least 1", c.poisonAttempts))
	}
	if c.deadLetters != nil {
		if err := c.deadLetters.validate(); err != nil {
			errs = append(errs, err)
		}
	}
	if c.revokeTimeout <= 0 || c.shutdown <= 0 {
		errs = append(errs, errors.New("revoke and shutdown timeouts must be positive"))
	}
	if err := errors.Join(errs...); err != nil {
		return c, fmt.Errorf("pipeline config: %w", err)
	}
	return c, nil
}
