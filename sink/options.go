package sink

import (
	"errors"
	"fmt"
	"log/slog"
	"time"
)

// Option configures a Ledger or a Guard. Options that apply to only one of
// them (WithEffect; WithLease, WithHooks) make the other's constructor fail.
type Option interface {
	apply(*config) error
}

type scope uint8

const (
	both scope = iota
	ledgerOnly
	guardOnly
)

type option struct {
	name  string
	scope scope
	fn    func(*config) error
}

func (o option) apply(c *config) error {
	if (o.scope == ledgerOnly && c.guard) || (o.scope == guardOnly && !c.guard) {
		what := "Ledger"
		if c.guard {
			what = "Guard"
		}
		return fmt.Errorf("sink: %s does not apply to a %s", o.name, what)
	}
	if err := o.fn(c); err != nil {
		return fmt.Errorf("sink: %s: %w", o.name, err)
	}
	return nil
}

type config struct {
	guard  bool
	prefix string
	ttl    time.Duration
	keys   KeySource
	effect Effect
	retry  Backoff
	log    *slog.Logger
	lease  time.Duration
	hooks  Hooks
}

func newConfig(guard bool, opts []Option) (config, error) {
	c := config{
		guard:  guard,
		prefix: "shardpipe:ledger:",
		ttl:    7 * 24 * time.Hour,
		retry:  Backoff{Initial: 50 * time.Millisecond, Max: 2 * time.Second, Attempts: 10},
		log:    slog.New(slog.DiscardHandler),
		lease:  30 * time.Second,
	}
	if guard {
		c.prefix = "shardpipe:guard:"
	}
	for _, o := range opts {
		if o == nil {
			continue
		}
		if err := o.apply(&c); err != nil {
			return config{}, err
		}
	}
	return c, nil
}

// WithPrefix sets the prefix of every ledger key (prefix + business key).
// Default "shardpipe:ledger:" for a Ledger, "shardpipe:guard:" for a Guard.
// On Redis Cluster with an effect, use a hash tag such as "{orders}:" so the
// ledger keys share the effect's slot (see Totals). Must not be empty.
func WithPrefix(prefix string) Option {
	return option{"WithPrefix", both, func(c *config) error {
		if prefix == "" {
			return errors.New("prefix is empty")
		}
		c.prefix = prefix
		return nil
	}}
}

// WithTTL sets how long a claim (an applied ledger entry, a done guard
// claim) lives after the last record that met its key: every record that
// meets it, applied or suppressed, renews it to at least the TTL from then
// (never shortening it). Exactly-once holds only while the claim lives: a
// record read again after that applies again. Default 7 days; at least 1ms
// (Redis expiries are whole milliseconds). Cost without an effect: one
// PEXPIRE GT per record in the batch's round trip.
// Memory cost: about 200 bytes per claim (Redis MEMORY USAGE, short keys)
// for the TTL, plus the group name and 11 bytes when Record.Group is set.
func WithTTL(ttl time.Duration) Option {
	return option{"WithTTL", both, func(c *config) error {
		if ttl < time.Millisecond {
			return fmt.Errorf("ttl %v is below 1ms, the smallest expiry Redis takes (PX)", ttl)
		}
		c.ttl = ttl
		return nil
	}}
}

// WithKeySource sets where the business key comes from. Default: the
// record key.
func WithKeySource(s KeySource) Option {
	return option{"WithKeySource", both, func(c *config) error {
		c.keys = s
		return nil
	}}
}

// WithEffect adds an atomic Redis effect that runs in the claim script only
// when the claim succeeds (Ledger only). nil means the ledger write is the
// whole effect, done with SET NX GET (one command per record, no script).
func WithEffect(e Effect) Option {
	return option{"WithEffect", ledgerOnly, func(c *config) error {
		if v, ok := e.(interface{ validate() error }); ok {
			if err := v.validate(); err != nil {
				return err
			}
		}
		c.effect = e
		return nil
	}}
}

// WithRetry sets how Redis errors are retried (see Backoff). Default
// {Initial: 50ms, Max: 2s, Attempts: 10}, about 9s in all. A Guard also
// polls a live foreign claim with Initial..Max (without the attempt limit).
func WithRetry(b Backoff) Option {
	return option{"WithRetry", both, func(c *config) error {
		if err := b.validate(); err != nil {
			return err
		}
		c.retry = b
		return nil
	}}
}

// WithLogger sets where retries and failed releases are logged (at Warn).
// Default: nowhere. nil keeps the default.
func WithLogger(l *slog.Logger) Option {
	return option{"WithLogger", both, func(c *config) error {
		if l != nil {
			c.log = l
		}
		return nil
	}}
}

// WithLease sets how long a Guard's pending claim lives (Guard only). It
// must exceed the effect's worst-case duration by a fifth: the effect's
// context ends a fifth of the lease before the lease could lapse, and an
// effect ended by its context counts as having run (see Guard.Do). While
// the effect runs the lease is renewed every third of it, one round trip
// each, so an effect that overruns its context still holds the claim while
// Redis answers. Shorter leases let a replay recover sooner after a crash.
// Default 30s; at least 1ms.
func WithLease(d time.Duration) Option {
	return option{"WithLease", guardOnly, func(c *config) error {
		if d < time.Millisecond {
			return fmt.Errorf("lease %v is below 1ms, the smallest expiry Redis takes (PX)", d)
		}
		c.lease = d
		return nil
	}}
}

// WithHooks installs fault-injection hooks (Guard only), for tests. Off by
// default; an unset hook costs one nil check.
func WithHooks(h Hooks) Option {
	return option{"WithHooks", guardOnly, func(c *config) error {
		c.hooks = h
		return nil
	}}
}
