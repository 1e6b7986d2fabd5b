package sink

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// ErrNotDurable means a Durable wait ended before the server confirmed the
// fsync or the replicas it was asked for: the writes before it may still be
// lost with the server, so no offset may be committed past them yet.
var ErrNotDurable = errors.New("sink: ledger writes not durable yet")

// DurableOpt is an option of NewDurable: what a Durable waits for before an
// offset commit, and for how long.
type DurableOpt interface {
	applyDurable(*durableConfig)
}

type durableOpt func(*durableConfig)

func (o durableOpt) applyDurable(c *durableConfig) { o(c) }

// WithLocalFsync makes a Durable wait until the server's AOF holding the
// writes is fsynced (WAITAOF numlocal 1). It needs WAITAOF (Redis 7.2+,
// Valkey) and appendonly yes, and the wait never succeeds under appendfsync
// no (Redis then does not fsync by itself). Default: off.
func WithLocalFsync() DurableOpt { return durableOpt(func(c *durableConfig) { c.localFsync = true }) }

// WithReplicas makes a Durable wait until n replicas have the writes:
// fsynced to their own AOF (WAITAOF numreplicas), or only received (WAIT)
// with WithWAIT. Default 0: no replica is waited for; not negative.
func WithReplicas(n int) DurableOpt { return durableOpt(func(c *durableConfig) { c.replicas = n }) }

// WithWAIT says the server has no WAITAOF (Redis before 7.2): replicas are
// awaited with WAIT, which confirms receipt, not fsync, and WithLocalFsync
// is refused. Default: WAITAOF.
func WithWAIT() DurableOpt { return durableOpt(func(c *durableConfig) { c.useWait = true }) }

// WithWaitTimeout bounds one Wait (default 2s; at least 1ms). It must stay
// below the client's read timeout (go-redis v9.23: 5s by default), or the
// client gives up first; NewDurable refuses it otherwise.
func WithWaitTimeout(d time.Duration) DurableOpt {
	return durableOpt(func(c *durableConfig) { c.timeout = d })
}

// durableConfig is what NewDurable and its options set.
type durableConfig struct {
	fenceKey   string
	localFsync bool
	replicas   int
	useWait    bool
	timeout    time.Duration
}

// Durable holds an offset commit back until the ledger writes Redis
// acknowledged before it are as durable as the server can promise (see
// NewDurable and its options). It costs one round trip per call: a SET of the fence key
// and the wait, pipelined. Under appendfsync always the local fsync is done
// before Redis replies, so the wait returns at once; under everysec it
// returns once the next fsync ran. A Durable is safe for concurrent use.
//
// It works on a single Redis (a *redis.Client, also a Sentinel failover
// client), not on Redis Cluster: there the keys of one batch live on
// several primaries, and each would need a fence of its own.
type Durable struct {
	c   *redis.Client
	cfg durableConfig
}

// NewDurable returns a Durable for c (a single-node or Sentinel client).
// fenceKey (required; keep it apart from the ledger's prefix) is SET, with a
// one-day expiry, right before each wait, on the same connection: WAITAOF
// and WAIT cover only the calling connection's own writes, and Redis logs
// and replicates writes in the order it runs them, so a wait for the fence
// covers every write Redis ran before it, whichever connection of the pool
// sent it. opts say what to wait for: WithLocalFsync, WithReplicas or both
// (one is required). It does no I/O; the caller has checked that the server
// has what they ask for (WAITAOF, appendonly).
func NewDurable(c redis.UniversalClient, fenceKey string, opts ...DurableOpt) (*Durable, error) {
	cfg := durableConfig{fenceKey: fenceKey}
	for _, o := range opts {
		if o != nil {
			o.applyDurable(&cfg)
		}
	}
	single, ok := c.(*redis.Client)
	switch {
	case c == nil:
		return nil, errors.New("sink: NewDurable: nil client")
	case !ok:
		return nil, fmt.Errorf("sink: NewDurable: %T: only a single-node or Sentinel client (*redis.Client); a cluster would need a fence on every primary", c)
	case cfg.fenceKey == "":
		return nil, errors.New("sink: NewDurable: empty fence key")
	case cfg.replicas < 0:
		return nil, fmt.Errorf("sink: NewDurable: %d replicas", cfg.replicas)
	case cfg.useWait && cfg.localFsync:
		return nil, errors.New("sink: NewDurable: the local fsync needs WAITAOF; WAIT awaits replicas only")
	case !cfg.localFsync && cfg.replicas == 0:
		return nil, errors.New("sink: NewDurable: nothing to wait for (no local fsync, no replicas)")
	}
	if cfg.timeout == 0 {
		cfg.timeout = 2 * time.Second
	}
	if cfg.timeout < time.Millisecond {
		return nil, fmt.Errorf("sink: NewDurable: timeout %v below 1ms", cfg.timeout)
	}
	if rt := single.Options().ReadTimeout; rt > 0 && cfg.timeout >= rt {
		return nil, fmt.Errorf("sink: NewDurable: timeout %v is not below the client's read timeout %v", cfg.timeout, rt)
	}
	return &Durable{c: single, cfg: cfg}, nil
}

// Wait returns nil once every write Redis ran before the call is fsynced
// locally and held by the replicas the options name; ErrNotDurable when the
// server answered with fewer within the wait timeout; another error when
// Redis could not be asked. Either error means: do not commit yet, try
// again later.
//
// The fence and the first wait go in one pipeline on one connection; the
// wait is then repeated on that connection, every 10ms, until it holds
// or the wait timeout passes: each WAITAOF or WAIT makes the server ask its
// replicas for a fresh acknowledgement, which a single long wait would otherwise get
// only from the replicas' once-a-second report.
func (d *Durable) Wait(ctx context.Context) error {
	conn := d.c.Conn()
	defer conn.Close()
	deadline := time.Now().Add(d.cfg.timeout)
	step := min(waitStep, d.cfg.timeout)
	p := conn.Pipeline()
	p.Set(ctx, d.cfg.fenceKey, time.Now().UnixMilli(), 24*time.Hour)
	wait := d.wait(ctx, p, step)
	if _, err := p.Exec(ctx); err != nil {
		return fmt.Errorf("sink: durability wait (fence %q): %w", d.cfg.fenceKey, err)
	}
	for {
		err := d.judge(wait)
		if err == nil || !errors.Is(err, ErrNotDurable) || !time.Now().Add(step).Before(deadline) {
			return err
		}
		if wait = d.wait(ctx, conn, step); wait.Err() != nil {
			return fmt.Errorf("sink: durability wait: %w", wait.Err())
		}
	}
}

// waitStep is how long one WAITAOF or WAIT of a Durable blocks.
const waitStep = 10 * time.Millisecond

// wait sends one WAITAOF (or WAIT) blocking at most step.
func (d *Durable) wait(ctx context.Context, c interface {
	Do(context.Context, ...any) *redis.Cmd
}, step time.Duration) *redis.Cmd {
	ms := max(step.Milliseconds(), 1)
	if d.cfg.useWait {
		return c.Do(ctx, "WAIT", d.cfg.replicas, ms)
	}
	local := 0
	if d.cfg.localFsync {
		local = 1
	}
	return c.Do(ctx, "WAITAOF", local, d.cfg.replicas, ms)
}

// judge reads the wait's reply.
func (d *Durable) judge(wait *redis.Cmd) error {
	if d.cfg.useWait { // WAIT: replicas that acknowledged
		n, err := wait.Int64()
		if err != nil {
			return fmt.Errorf("sink: durability wait: WAIT reply: %w", err)
		}
		if n < int64(d.cfg.replicas) {
			return fmt.Errorf("%w: %d of %d replicas acknowledged within %v (WAIT)", ErrNotDurable, n, d.cfg.replicas, d.cfg.timeout)
		}
		return nil
	}
	v, err := wait.Int64Slice()
	if err != nil || len(v) != 2 {
		return fmt.Errorf("sink: durability wait: WAITAOF reply %v: %w", wait, err)
	}
	if d.cfg.localFsync && v[0] < 1 {
		return fmt.Errorf("%w: the server did not fsync its AOF within %v (WAITAOF; under appendfsync no it never does)", ErrNotDurable, d.cfg.timeout)
	}
	if v[1] < int64(d.cfg.replicas) {
		return fmt.Errorf("%w: %d of %d replicas fsynced within %v (WAITAOF)", ErrNotDurable, v[1], d.cfg.replicas, d.cfg.timeout)
	}
	return nil
}
