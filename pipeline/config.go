package pipeline

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/shardpipe/shardpipe/checkpoint"
	"github.com/shardpipe/shardpipe/sink"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/plugin/kotel"
)

// config is what the options of New and NewReplay set (options.go):
// defaultConfig before any option, then each option in order, then
// validate, which fills in the defaults that depend on other options.
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
	queueRecords   int // 0: the default, 4 x maxBatch
	queueBytes     int
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
	// in flight: 0 runs batches one after another
	maxInFlight, maxInFlightTotal, effectAttempts int
	stopOnEffectFailure                           bool
}

// deadLetterConfig is what DeadLetters and its options set: zero durations
// take their defaults in config.validate.
type deadLetterConfig struct {
	redis     redis.UniversalClient
	prefix    string
	topic     string
	ttl       time.Duration
	lease     time.Duration
	scanBound time.Duration
	// the poison storm bounds (poisonstorm.go): DeadLetters starts them
	// at their defaults, as 0 means no bound
	maxRun   int
	maxShare float64
	window   int
}

// defaultConfig is the configuration before any option: each default that
// depends on no other option. A zero value of a field not set here is
// either meaningful (CommitEvery(0): no count trigger) or filled in by
// validate.
func defaultConfig() config {
	return config{
		startEarliest:    true,
		policy:           checkpoint.Policy{Every: 500, Interval: 5 * time.Second},
		maxBatch:         500,
		queueBytes:       2 << 20,
		revokeTimeout:    20 * time.Second,
		commitTimeout:    15 * time.Second,
		shutdown:         30 * time.Second,
		poisonAttempts:   3,
		replayPrefix:     DefaultReplayPrefix,
		maxInFlightTotal: 1024,
		effectAttempts:   5,
		logger:           slog.Default(),
	}
}

// newConfig applies opts over defaultConfig and validates the result;
// group runs (New) need topics and a group, replays name their topic
// themselves.
func newConfig[O interface{ apply(*config) }](opts []O, group bool) (config, error) {
	c := defaultConfig()
	for _, o := range opts {
		if any(o) != nil {
			o.apply(&c)
		}
	}
	if err := c.validate(group); err != nil {
		return c, fmt.Errorf("pipeline config: %w", err)
	}
	return c, nil
}

// validate is the one place options are checked: it fills in the defaults
// that depend on other options (QueueRecords from MaxBatch,
// the commit policy's Max from MaxUncommitted, the backoffs from
// PoisonAttempts, a dead-letter configuration's zero durations) and reports
// every value out of range at once, each naming the option and the range
// it wants.
func (c *config) validate(group bool) error {
	if c.logger == nil {
		c.logger = slog.Default()
	}
	if c.queueRecords == 0 {
		c.queueRecords = 4 * c.maxBatch
	}
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if len(c.brokers) == 0 {
		bad("no brokers")
	}
	if group && len(c.topics) == 0 {
		bad("no topics")
	}
	if group && c.group == "" {
		bad("no group")
	}
	if c.applier == nil {
		bad("no sink")
	}
	if c.policy.Every < 0 || c.policy.Interval < 0 {
		bad("commit policy %+v: negative", c.policy)
	}
	switch {
	case c.maxUncommitted < 0:
		bad("max uncommitted %d: negative", c.maxUncommitted)
	case c.maxUncommitted == 0:
		c.policy.Max = 10 * max(c.policy.Every, c.maxBatch)
	case c.maxUncommitted < c.policy.Every:
		bad("max uncommitted %d is below commit every %d: want at least it", c.maxUncommitted, c.policy.Every)
	default:
		c.policy.Max = c.maxUncommitted
	}
	if c.maxBatch < 1 || c.queueRecords < c.maxBatch {
		bad("max batch %d and queue %d: want 1 <= batch <= queue", c.maxBatch, c.queueRecords)
	}
	if c.queueBytes < 1 {
		bad("queue bytes %d: want at least 1", c.queueBytes)
	}
	c.retry = sink.Backoff{Initial: 100 * time.Millisecond, Max: 5 * time.Second}
	c.poison = sink.Backoff{Initial: 100 * time.Millisecond, Max: 2 * time.Second, Attempts: c.poisonAttempts}
	if c.maxInFlight < 0 || c.maxInFlight > 4096 {
		bad("max in flight %d: want 0 to 4096", c.maxInFlight)
	}
	if c.maxInFlightTotal < 1 {
		bad("max in flight total %d: want at least 1", c.maxInFlightTotal)
	}
	if c.effectAttempts < 1 {
		bad("effect attempts %d: want at least 1", c.effectAttempts)
	}
	if c.poisonAttempts < 1 {
		bad("poison attempts %d: want at least 1", c.poisonAttempts)
	}
	if c.revokeTimeout <= 0 || c.shutdown <= 0 {
		bad("revoke and shutdown timeouts must be positive")
	}
	if d := c.deadLetters; d != nil {
		if d.ttl == 0 {
			d.ttl = 7 * 24 * time.Hour
		}
		if d.lease == 0 {
			d.lease = 30 * time.Second
		}
		if d.scanBound == 0 {
			d.scanBound = time.Minute
		}
		switch {
		case d.maxRun < 0:
			bad("dead letters: max run %d: want 0 (no bound) or more", d.maxRun)
		case d.maxShare < 0 || d.maxShare > 1:
			bad("dead letters: max share %v: want 0 (no bound) to 1", d.maxShare)
		case d.maxShare > 0 && d.window < 1:
			bad("dead letters: max share window %d: want at least 1 record", d.window)
		}
		switch {
		case d.redis == nil:
			bad("dead letters: no Redis client for the markers")
		case d.prefix == "":
			bad("dead letters: empty marker prefix")
		case d.ttl < time.Millisecond || d.lease < time.Millisecond || d.scanBound < time.Millisecond:
			bad("dead letters: TTL %v, lease %v and scan bound %v must be at least 1ms", d.ttl, d.lease, d.scanBound)
		}
	}
	return errors.Join(errs...)
}
