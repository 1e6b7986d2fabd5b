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

// ErrWritesLost means a Durable wait found that a primary the ledger writes
// go to changed since its last wait (a replica took over, or the server
// restarted): writes it acknowledged before may be gone. No offset may be
// committed past them; the records since the last commit must be applied
// again (the ledger suppresses those whose writes survived). Durable.Losses
// counts these findings.
var ErrWritesLost = errors.New("sink: the ledger's primary changed: acknowledged writes may be lost")

// Durable holds an offset commit back until the ledger writes Redis
// acknowledged before it are as durable as the server can promise (see the
// DurableOpt options). It costs one round trip per call: a SET of the fence key
// and the wait, pipelined. Under appendfsync always the local fsync is done
// before Redis replies, so the wait returns at once; under everysec it
// returns once the next fsync ran. A Durable is safe for concurrent use.
//
// On a single Redis (a *redis.Client, also a Sentinel failover client) it
// fences and waits on that server. On Redis Cluster (a
// *redis.ClusterClient) the writes of a batch live on several primaries,
// each with its own replication stream: every call reads which primaries
// serve slots (CLUSTER SHARDS, one more round trip) and fences and waits on
// each of them at once, with a fence key of its own in one of that
// primary's slots (FenceKey followed by a {hash tag} chosen for the slot),
// so the call costs two round trips plus the slowest primary's wait.
type Durable struct {
	single  *redis.Client
	cluster *redis.ClusterClient
	cfg     durableConfig
	tags    tagCache
	prim    primaries
}

// NewDurable returns a Durable for c: a single-node or Sentinel client, or a
// cluster client. fenceKey (required; keep it apart from the ledger's
// prefix) is SET, with a one-day expiry, right before each wait, on the same
// connection: WAITAOF and WAIT cover only the calling connection's own
// writes, and Redis logs and replicates writes in the order it runs them, so
// a wait for the fence covers every write Redis ran before it, whichever
// connection of the pool sent it. On a cluster the fence key must have no
// {hash tag} of its own: each primary's fence gets one. opts say what to
// wait for: WithLocalFsync, WithReplicas or both (one is required). It does
// no I/O; the caller has checked that the servers have what they ask for
// (WAITAOF, appendonly).
func NewDurable(c redis.UniversalClient, fenceKey string, opts ...DurableOpt) (*Durable, error) {
	cfg := durableConfig{FenceKey: fenceKey}
	for _, o := range opts {
		if o != nil {
			o.applyDurable(&cfg)
		}
	}
	d := &Durable{cfg: cfg}
	var readTimeout time.Duration
	switch cl := c.(type) {
	case *redis.Client:
		d.single, readTimeout = cl, cl.Options().ReadTimeout
	case *redis.ClusterClient:
		d.cluster, readTimeout = cl, cl.Options().ReadTimeout
	}
	switch {
	case c == nil:
		return nil, errors.New("sink: NewDurable: nil client")
	case d.single == nil && d.cluster == nil:
		return nil, fmt.Errorf("sink: NewDurable: %T: want a single-node, Sentinel (*redis.Client) or cluster (*redis.ClusterClient) client", c)
	case cfg.FenceKey == "":
		return nil, errors.New("sink: NewDurable: empty fence key")
	case d.cluster != nil && hasHashTag(cfg.FenceKey):
		return nil, fmt.Errorf("sink: NewDurable: fence key %q has a {hash tag}: on Redis Cluster each primary's fence needs a tag of its own", cfg.FenceKey)
	case cfg.Replicas < 0:
		return nil, fmt.Errorf("sink: NewDurable: %d replicas", cfg.Replicas)
	case cfg.UseWait && cfg.LocalFsync:
		return nil, errors.New("sink: NewDurable: the local fsync needs WAITAOF; WAIT awaits replicas only")
	case !cfg.LocalFsync && cfg.Replicas == 0:
		return nil, errors.New("sink: NewDurable: nothing to wait for (no local fsync, no replicas)")
	}
	if d.cfg.Timeout == 0 {
		d.cfg.Timeout = 2 * time.Second
	}
	if d.cfg.Timeout < time.Millisecond {
		return nil, fmt.Errorf("sink: NewDurable: timeout %v below 1ms", d.cfg.Timeout)
	}
	if readTimeout > 0 && d.cfg.Timeout >= readTimeout {
		return nil, fmt.Errorf("sink: NewDurable: timeout %v is not below the client's read timeout %v", d.cfg.Timeout, readTimeout)
	}
	return d, nil
}

// Wait returns nil once every write Redis ran before the call is fsynced
// locally and held by the replicas the options name (on a cluster: on every
// primary); ErrNotDurable when a server answered with fewer within the
// wait timeout; ErrWritesLost when a primary is another server, or another run
// of it, than at the wait before (or Prime): a failover or a restart that
// may have dropped acknowledged writes (see Losses); another error when
// Redis could not be asked. Any error means: do not commit yet, try again
// later.
//
// The fence and the first wait go in one pipeline on one connection; the
// wait is then repeated on that connection, every waitStep, until it holds
// or the wait timeout passes: each WAITAOF or WAIT makes the server ask its replicas
// for a fresh acknowledgement, which a single long wait would otherwise get
// only from the replicas' once-a-second report.
func (d *Durable) Wait(ctx context.Context) error {
	if d.cluster != nil {
		return d.waitCluster(ctx)
	}
	primed := d.prim.isPrimed()
	seen, err := d.waitOn(ctx, d.single, d.cfg.FenceKey, "", primed)
	if seen && !primed {
		d.prim.setPrimed()
	}
	return err
}

// waitOn fences key on one connection of node and waits there. id, when
// set, is the cluster node ID the caller expects node to be. In the same
// round trip it reads the server's identity (run ID, replication ID) and
// compares it with the last one seen for id when primed; seen says whether
// it read one.
func (d *Durable) waitOn(ctx context.Context, node *redis.Client, key, id string, primed bool) (seen bool, err error) {
	conn := node.Conn()
	defer conn.Close()
	deadline := time.Now().Add(d.cfg.Timeout)
	step := min(waitStep, d.cfg.Timeout)
	p := conn.Pipeline()
	p.Set(ctx, key, time.Now().UnixMilli(), 24*time.Hour)
	wait := d.wait(ctx, p, step)
	info := p.Info(ctx, "server", "replication")
	var myID *redis.StringCmd
	if id != "" {
		myID = p.ClusterMyID(ctx)
	}
	if _, err := p.Exec(ctx); err != nil {
		return false, fmt.Errorf("sink: durability wait (fence %q on %s): %w", key, node.Options().Addr, err)
	}
	if myID != nil && myID.Val() != id {
		return false, fmt.Errorf("sink: durability wait: fence %q landed on node %s (%s), not on %s: the cluster changed; asking again",
			key, myID.Val(), node.Options().Addr, id)
	}
	ident, err := identity(info)
	if err != nil {
		return false, fmt.Errorf("sink: durability wait on %s: %w", node.Options().Addr, err)
	}
	if d.prim.observe(id, ident, primed) {
		return true, fmt.Errorf("%w: %s is another server or another run of it than at the last wait (run ID/replication ID %s): a failover or a restart",
			ErrWritesLost, node.Options().Addr, ident)
	}
	for {
		err := d.judge(wait)
		if err == nil || !errors.Is(err, ErrNotDurable) || !time.Now().Add(step).Before(deadline) {
			if err != nil && id != "" {
				err = fmt.Errorf("primary %s: %w", node.Options().Addr, err)
			}
			return true, err
		}
		if wait = d.wait(ctx, conn, step); wait.Err() != nil {
			return true, fmt.Errorf("sink: durability wait: %w", wait.Err())
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
	if d.cfg.UseWait {
		return c.Do(ctx, "WAIT", d.cfg.Replicas, ms)
	}
	local := 0
	if d.cfg.LocalFsync {
		local = 1
	}
	return c.Do(ctx, "WAITAOF", local, d.cfg.Replicas, ms)
}

// judge reads the wait's reply.
func (d *Durable) judge(wait *redis.Cmd) error {
	if d.cfg.UseWait { // WAIT: replicas that acknowledged
		n, err := wait.Int64()
		if err != nil {
			return fmt.Errorf("sink: durability wait: WAIT reply: %w", err)
		}
		if n < int64(d.cfg.Replicas) {
			return fmt.Errorf("%w: %d of %d replicas acknowledged within %v (WAIT)", ErrNotDurable, n, d.cfg.Replicas, d.cfg.Timeout)
		}
		return nil
	}
	v, err := wait.Int64Slice()
	if err != nil || len(v) != 2 {
		return fmt.Errorf("sink: durability wait: WAITAOF reply %v: %w", wait, err)
	}
	if d.cfg.LocalFsync && v[0] < 1 {
		return fmt.Errorf("%w: the server did not fsync its AOF within %v (WAITAOF; under appendfsync no it never does)", ErrNotDurable, d.cfg.Timeout)
	}
	if v[1] < int64(d.cfg.Replicas) {
		return fmt.Errorf("%w: %d of %d replicas fsynced within %v (WAITAOF)", ErrNotDurable, v[1], d.cfg.Replicas, d.cfg.Timeout)
	}
	return nil
}
