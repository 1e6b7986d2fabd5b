package sink

import (
	"errors"
	"fmt"
	"log/slog"
	"time"
)

// LedgerOpt is an option of NewLedger. Options that apply to a Guard as well
// are Opt, which is a LedgerOpt too; WithEffect is a LedgerOpt alone, so
// passing it to NewGuard does not compile.
type LedgerOpt interface {
	apply(*config) error
	ledgerOpt()
}

// GuardOpt is an option of NewGuard. Options that apply to a Ledger as well
// are Opt, which is a GuardOpt too; WithLease is a GuardOpt alone, so
// passing it to NewLedger does not compile.
type GuardOpt interface {
	apply(*config) error
	guardOpt()
}

// Opt is an option of both NewLedger and NewGuard: it is a LedgerOpt and a
// GuardOpt. A slice of Opt is passed to either constructor element by
// element (a []Opt is not a []LedgerOpt).
type Opt interface {
	LedgerOpt
	GuardOpt
}

// The three kinds of option, as kgo scopes its own: each names itself in
// the errors of its validation and carries the marker methods of the
// constructors that accept it.
type (
	opt       named // NewLedger and NewGuard
	ledgerOpt named // NewLedger only
	guardOpt  named // NewGuard only
)

type named struct {
	name string
	fn   func(*config) error
}

func (o named) apply(c *config) error {
	if err := o.fn(c); err != nil {
		return fmt.Errorf("sink: %s: %w", o.name, err)
	}
	return nil
}

func (o opt) apply(c *config) error       { return named(o).apply(c) }
func (opt) ledgerOpt()                    {}
func (opt) guardOpt()                     {}
func (o ledgerOpt) apply(c *config) error { return named(o).apply(c) }
func (ledgerOpt) ledgerOpt()              {}
func (o guardOpt) apply(c *config) error  { return named(o).apply(c) }
func (guardOpt) guardOpt()                {}

type config struct {
	prefix string
	ttl    time.Duration
	keys   KeySource
	effect Effect
	retry  Backoff
	log    *slog.Logger
	lease  time.Duration
}

func newConfig[O interface{ apply(*config) error }](guard bool, opts []O) (config, error) {
	c := config{
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
		if any(o) == nil {
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
func WithPrefix(prefix string) Opt {
	return opt{"WithPrefix", func(c *config) error {
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
// (Redis expiries are whole milliseconds). Cost: one PEXPIRE GT per key
// found, inside the batch's script (on Redis Cluster without an effect, one
// more command per record in the batch's pipeline).
// Memory cost: about 200 bytes per claim (Redis MEMORY USAGE, short keys)
// for the TTL, plus the group name and 11 bytes when Record.Group is set.
func WithTTL(ttl time.Duration) Opt {
	return opt{"WithTTL", func(c *config) error {
		if ttl < time.Millisecond {
			return fmt.Errorf("ttl %v is below 1ms, the smallest expiry Redis takes (PX)", ttl)
		}
		c.ttl = ttl
		return nil
	}}
}

// WithKeySource sets where the business key comes from. Default: the
// record key.
func WithKeySource(s KeySource) Opt {
	return opt{"WithKeySource", func(c *config) error {
		c.keys = s
		return nil
	}}
}

// WithEffect adds an atomic Redis effect that runs in the claim script only
// when the claim succeeds (Ledger only). nil means the ledger write is the
// whole effect, done with SET NX GET (one command per record, no script).
func WithEffect(e Effect) LedgerOpt {
	return ledgerOpt{"WithEffect", func(c *config) error {
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
func WithRetry(b Backoff) Opt {
	return opt{"WithRetry", func(c *config) error {
		if err := b.validate(); err != nil {
			return err
		}
		c.retry = b
		return nil
	}}
}

// WithLogger sets where retries and failed releases are logged (at Warn).
// Default: nowhere. nil keeps the default.
func WithLogger(l *slog.Logger) Opt {
	return opt{"WithLogger", func(c *config) error {
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
func WithLease(d time.Duration) GuardOpt {
	return guardOpt{"WithLease", func(c *config) error {
		if d < time.Millisecond {
			return fmt.Errorf("lease %v is below 1ms, the smallest expiry Redis takes (PX)", d)
		}
		c.lease = d
		return nil
	}}
}

// DurableOpt is an option of NewDurable: what a Durable waits for before an
// offset commit, and for how long.
type DurableOpt interface {
	applyDurable(*durableConfig)
}

type durableOpt func(*durableConfig)

func (o durableOpt) applyDurable(c *durableConfig) { o(c) }

// WithLocalFsync makes a Durable wait until the server's AOF holding the
// writes is fsynced (WAITAOF numlocal 1; on a cluster, on every primary). It
// needs WAITAOF (Redis 7.2+, Valkey) and appendonly yes, and the wait never
// succeeds under appendfsync no (Redis then does not fsync by itself).
// Default: off.
func WithLocalFsync() DurableOpt { return durableOpt(func(c *durableConfig) { c.LocalFsync = true }) }

// WithReplicas makes a Durable wait until n replicas (on a cluster: n
// replicas of every primary) have the writes: fsynced to their own AOF
// (WAITAOF numreplicas), or only received (WAIT) with WithWAIT. Default 0:
// no replica is waited for; not negative.
func WithReplicas(n int) DurableOpt { return durableOpt(func(c *durableConfig) { c.Replicas = n }) }

// WithWAIT says the servers have no WAITAOF (Redis before 7.2): replicas are
// awaited with WAIT, which confirms receipt, not fsync, and WithLocalFsync
// is refused. Default: WAITAOF.
func WithWAIT() DurableOpt { return durableOpt(func(c *durableConfig) { c.UseWait = true }) }

// WithWaitTimeout bounds one Wait (default 2s; at least 1ms). It must stay
// below the client's read timeout (go-redis v9.23: 5s by default), or the
// client gives up first; NewDurable refuses it otherwise.
func WithWaitTimeout(d time.Duration) DurableOpt {
	return durableOpt(func(c *durableConfig) { c.Timeout = d })
}

// durableConfig is what NewDurable and its options set.
type durableConfig struct {
	FenceKey   string
	LocalFsync bool
	Replicas   int
	UseWait    bool
	Timeout    time.Duration
}
