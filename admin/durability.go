package admin

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/shardpipe/shardpipe/pipeline"
	"github.com/shardpipe/shardpipe/sink"
)

// DurabilityConfig says what the ledger's Redis must promise before an
// offset commit, and which settings that break the ledger are accepted.
type DurabilityConfig struct {
	// Name is how problems and risks call a single-node Redis (a URL
	// without its password, say); "" uses its address.
	Name string
	// FenceKey is the key the barrier writes before each wait
	// (sink.NewDurable's fenceKey). Required when a barrier is built; keep
	// it apart from the ledger's prefix, so no business key can name it.
	FenceKey string
	// Replicas is how many replicas must hold the ledger writes before a
	// commit (WAITAOF: fsynced there; Redis before 7.2: WAIT, received).
	// 0 (the default) waits for none. On Redis Cluster every primary's
	// replicas are waited for.
	Replicas int
	// AllowEviction accepts a maxmemory-policy other than noeviction (a
	// Risk instead of ErrEviction): a record whose key was evicted applies
	// its effect again.
	AllowEviction bool
	// AllowNoPersistence accepts a Redis that persists nothing (a Risk
	// instead of ErrNoPersistence): a restart loses the ledger and the
	// effects written with it.
	AllowNoPersistence bool
}

// Durability is what CheckDurability found, and what commits wait for.
type Durability struct {
	// Nodes are the settings of each primary, in the order read.
	Nodes []NodeSettings
	// Barrier is what every commit should wait for (pipeline.BeforeCommit):
	// a *sink.Durable (on Redis Cluster: one that waits on every primary),
	// or nil when there is nothing to wait for (no local fsync to wait for
	// and Replicas 0). It was primed (sink.Durable.Prime) when it could be.
	Barrier pipeline.Barrier
	// Wait is what the barrier sends: "WAITAOF", "WAIT", or "none".
	Wait string
	// LocalFsync says the barrier waits for the primary's AOF fsync.
	LocalFsync bool
	// Risks are the settings that can lose or re-apply effects but are
	// accepted (by DurabilityConfig or because they only weaken a
	// guarantee), in the order found; the caller should log them.
	Risks []Risk
}

// NodeSettings is what one primary said about its persistence.
type NodeSettings struct {
	// Addr is the node's address (DurabilityConfig.Name for a single node).
	Addr string
	// Config holds CONFIG GET's appendonly, appendfsync, save and
	// maxmemory-policy; nil when the server refused CONFIG GET.
	Config map[string]string
	// ConfigErr is CONFIG GET's error reply when it was refused (an ACL
	// without +config): the settings were then not checked.
	ConfigErr error
	// WaitAOF is what the WAITAOF probe found.
	WaitAOF WaitAOF
	// ProbeErr is the probe's error reply (NOPERM, unknown command); nil
	// when WAITAOF answered or appendonly is off.
	ProbeErr error
}

// WaitAOF is what a WAITAOF probe found on a server.
type WaitAOF uint8

// What the probe finds.
const (
	WaitAOFAbsent  WaitAOF = iota // unknown command: Redis before 7.2
	WaitAOFOn                     // WAITAOF answered: appendonly yes
	WaitAOFOff                    // WAITAOF refused numlocal: appendonly no
	WaitAOFRefused                // NOPERM: the ACL user may not run it
)

// Risk is a setting that weakens the ledger's guarantees, accepted.
type Risk struct {
	// Addr is the server.
	Addr string
	// Setting names it: "maxmemory-policy", "appendonly", "appendfsync",
	// "CONFIG GET", "WAITAOF", "replicas" or "primaries".
	Setting string
	// Err is the sentinel of a problem accepted by DurabilityConfig
	// (ErrEviction, ErrNoPersistence); nil for a warning.
	Err error
	// Message says what it risks and the fix, as one log message.
	Message string
	// Attrs are slog key-value pairs naming the setting and its value (or
	// the error), to log after "redis", Addr.
	Attrs []any
}

// CheckDurability reads the persistence and eviction settings of every
// primary of rdb (CONFIG GET appendonly appendfsync save maxmemory-policy)
// and whether it has WAITAOF, and returns the barrier commits should wait
// for. Settings that break a ledger are *CheckErrors, joined: a
// maxmemory-policy other than noeviction (ErrEviction: ledger keys carry a
// TTL, so volatile-* evicts them too) and no persistence at all
// (ErrNoPersistence), unless cfg accepts them; the rest it risks is in
// Durability.Risks. A server whose ACL refuses CONFIG GET is a Risk (not
// checked). A request that fails is an *UnreachableError.
//
// It costs one WAITAOF probe (numlocal 1, 1 ms: it answers at once on a
// fresh connection) and one pipelined CONFIG GET per primary, plus INFO
// replication when Replicas > 0. The returned Durability holds what was
// read even when the error is not nil.
func CheckDurability(ctx context.Context, rdb redis.UniversalClient, cfg DurabilityConfig) (Durability, error) {
	var d Durability
	name := cfg.Name
	if name == "" {
		name = clientName(rdb)
	}
	var nodes []*redis.Client
	switch c := rdb.(type) {
	case *redis.Client:
		nodes = []*redis.Client{c}
	case *redis.ClusterClient:
		err := c.ForEachMaster(ctx, func(_ context.Context, n *redis.Client) error {
			nodes = append(nodes, n)
			return nil
		})
		if err != nil {
			return d, unreachable("redis cluster "+name, "CLUSTER SLOTS", err,
				fmt.Sprintf("redis cluster %s: reading the nodes failed: %v", name, err))
		}
	default:
		return d, nil
	}
	var errs []error
	for _, n := range nodes {
		addr := n.Options().Addr
		if len(nodes) == 1 {
			addr = name
		}
		var s NodeSettings
		err := answered(ctx, func() (err error) {
			s, err = readSettings(ctx, n)
			return err
		}, nil)
		if err != nil {
			return d, unreachable("redis "+addr, "CONFIG GET", err,
				fmt.Sprintf("redis %s: reading its persistence settings: %v", addr, err))
		}
		s.Addr = addr
		d.Nodes = append(d.Nodes, s)
		errs = append(errs, s.judge(cfg, &d.Risks)...)
	}
	if err := errors.Join(errs...); err != nil {
		return d, err
	}
	return d, d.barrier(ctx, rdb, name, cfg)
}

// readSettings probes WAITAOF (numlocal 1, 1 ms: a fresh connection has no
// writes to wait for, so it answers at once, or refuses when appendonly is
// off) and reads CONFIG GET. A reply error is kept; no answer is an error.
func readSettings(ctx context.Context, c *redis.Client) (NodeSettings, error) {
	var s NodeSettings
	err := c.Do(ctx, "WAITAOF", 1, 0, 1).Err()
	var rerr redis.Error
	switch {
	case err == nil:
		s.WaitAOF = WaitAOFOn
	case !errors.As(err, &rerr):
		return s, err
	case strings.Contains(err.Error(), "appendonly is disabled"):
		s.WaitAOF = WaitAOFOff
	case strings.HasPrefix(err.Error(), "NOPERM"):
		s.WaitAOF, s.ProbeErr = WaitAOFRefused, err
	default:
		s.WaitAOF, s.ProbeErr = WaitAOFAbsent, err
	}
	names := []string{"appendonly", "appendfsync", "save", "maxmemory-policy"}
	p := c.Pipeline()
	cmds := make([]*redis.MapStringStringCmd, len(names))
	for i, n := range names {
		cmds[i] = p.ConfigGet(ctx, n)
	}
	_, _ = p.Exec(ctx) // each command's error is read below
	m := make(map[string]string)
	for _, cmd := range cmds {
		v, err := cmd.Result()
		switch {
		case err == nil:
			for k, x := range v {
				m[k] = x
			}
		case errors.As(err, &rerr):
			s.ConfigErr = err
			return s, nil
		default:
			return s, err
		}
	}
	if len(m) == 0 {
		s.ConfigErr = errors.New("CONFIG GET answered no fields")
		return s, nil
	}
	s.Config = m
	return s, nil
}

// judge returns one *CheckError per setting that breaks the ledger and is
// not accepted by cfg, and adds a Risk for each risk it accepts.
func (s NodeSettings) judge(cfg DurabilityConfig, risks *[]Risk) []error {
	addr := s.Addr
	risk := func(setting string, err error, msg string, attrs ...any) {
		*risks = append(*risks, Risk{Addr: addr, Setting: setting, Err: err, Message: msg, Attrs: attrs})
	}
	if s.Config == nil {
		risk("CONFIG GET", nil, "redis CONFIG GET refused: maxmemory-policy, appendonly, appendfsync and save not checked; make sure the ledger's Redis uses maxmemory-policy noeviction and appendonly yes",
			"err", s.ConfigErr)
		return nil
	}
	var errs []error
	if p, ok := s.Config["maxmemory-policy"]; ok && p != "noeviction" {
		if !cfg.AllowEviction {
			errs = append(errs, &CheckError{Server: "redis " + addr, Setting: "maxmemory-policy", Value: p,
				Fix: "set maxmemory-policy noeviction (CONFIG SET and redis.conf)", Err: ErrEviction,
				msg: fmt.Sprintf("redis %s: maxmemory-policy is %s: Redis may evict ledger keys when memory runs short (they carry a TTL, so volatile-* policies evict them too), and a record whose key was evicted applies its effect again; set maxmemory-policy noeviction (CONFIG SET and redis.conf)",
					addr, p)})
		} else {
			risk("maxmemory-policy", ErrEviction, "redis may evict ledger keys, allowed by DurabilityConfig.AllowEviction: a record whose key was evicted applies again",
				"setting", "maxmemory-policy is "+p)
		}
	}
	aof, save := s.Config["appendonly"], strings.TrimSpace(s.Config["save"])
	_, haveSave := s.Config["save"]
	switch {
	case aof == "no" && haveSave && save == "":
		if !cfg.AllowNoPersistence {
			errs = append(errs, &CheckError{Server: "redis " + addr, Setting: "appendonly", Value: "no", Err: ErrNoPersistence,
				Fix: "set appendonly yes with appendfsync always (or everysec on Redis 7.2+ or Valkey, where commits wait for the fsync)",
				msg: fmt.Sprintf(`redis %s: appendonly no and save "": Redis persists nothing, so a restart forgets the ledger and the effects written with it while the offsets stay committed past them (lost, not replayed); set appendonly yes with appendfsync always (or everysec on Redis 7.2+ or Valkey, where commits wait for the fsync)`,
					addr)})
		} else {
			risk("appendonly", ErrNoPersistence, "redis persists nothing, allowed by DurabilityConfig.AllowNoPersistence: a restart loses the ledger and its effects",
				"setting", "appendonly no, no save points")
		}
	case aof == "no" && haveSave:
		risk("appendonly", nil, "redis persists by RDB snapshots only: a crash loses the ledger writes since the last snapshot, and their effects with them, while the offsets were committed past them; set appendonly yes",
			"appendonly", aof, "save", save)
	case aof == "yes" && s.Config["appendfsync"] == "everysec" && s.WaitAOF != WaitAOFOn:
		risk("appendfsync", nil, "redis appendfsync everysec and no WAITAOF (Redis before 7.2, or refused by its ACL): a crash of the Redis host (power, kernel) can lose the last second of ledger writes (up to two when the disk is slow) after their offsets were committed: those effects are lost, not replayed; set appendfsync always, or use Redis 7.2+ or Valkey so that commits wait for the fsync",
			"appendfsync", "everysec")
	case aof == "yes" && s.Config["appendfsync"] == "no":
		risk("appendfsync", nil, "redis appendfsync no: Redis never fsyncs the AOF itself (the OS writes it out, often within 30s), so a crash of the host can lose that much of the ledger after the offsets were committed, and commits cannot wait for it; set appendfsync always or everysec",
			"appendfsync", "no")
	}
	return errs
}

// barrier sets d's barrier for c (one server, or every primary of a
// cluster, with the weakest of their settings), with what it waits for.
func (d *Durability) barrier(ctx context.Context, c redis.UniversalClient, name string, cfg DurabilityConfig) error {
	s := weakest(d.Nodes)
	localFsync, useWait, timeout := false, false, 2*time.Second
	if rt := readTimeout(c); rt > 0 && rt <= timeout {
		timeout = rt * 2 / 3 // the wait must end before the client stops reading
	}
	wait := "WAIT"
	switch s.WaitAOF {
	case WaitAOFOn:
		// appendfsync no never fsyncs by itself: a local wait would hold
		// every commit forever (a Risk of judge).
		localFsync = s.Config["appendfsync"] != "no"
		wait = "WAITAOF"
	case WaitAOFOff:
		wait = "WAITAOF"
	case WaitAOFRefused:
		d.Risks = append(d.Risks, Risk{Addr: name, Setting: "WAITAOF",
			Message: "redis refused WAITAOF (ACL): commits cannot wait for the ledger writes' fsync", Attrs: []any{"err", s.ProbeErr}})
		useWait = true
	default:
		useWait = true
	}
	if cfg.Replicas > 0 {
		if n, err := fewestReplicas(ctx, c); err == nil && n < cfg.Replicas {
			d.Risks = append(d.Risks, Risk{Addr: name, Setting: "replicas",
				Message: "fewer redis replicas connected than DurabilityConfig.Replicas: commits wait until enough of them hold the writes",
				Attrs:   []any{"connected", n, "want", cfg.Replicas}})
		}
	}
	d.LocalFsync = localFsync
	if !localFsync && cfg.Replicas == 0 {
		d.Wait = "none"
		return nil
	}
	d.Wait = wait
	opts := []sink.DurableOpt{sink.WithReplicas(cfg.Replicas), sink.WithWaitTimeout(timeout)}
	if localFsync {
		opts = append(opts, sink.WithLocalFsync())
	}
	if useWait {
		opts = append(opts, sink.WithWAIT())
	}
	b, err := sink.NewDurable(c, cfg.FenceKey, opts...)
	if err != nil {
		return err
	}
	if err := b.Prime(ctx); err != nil {
		d.Risks = append(d.Risks, Risk{Addr: name, Setting: "primaries",
			Message: "redis durability: could not read which primaries the ledger writes go to; the first wait will, and a failover before it goes unnoticed",
			Attrs:   []any{"err", err}})
	}
	d.Barrier = b
	return nil
}

// connectedReplicas reads connected_slaves from INFO replication.
func connectedReplicas(ctx context.Context, c *redis.Client) (int, error) {
	info, err := redisInfo(ctx, c, "replication")
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(info["connected_slaves"])
}

// Attrs returns what d found as log attributes: the wait, the local fsync,
// and the first node's appendonly, appendfsync, save and maxmemory_policy
// (those it read).
func (d Durability) Attrs() []any {
	attrs := []any{"wait", d.Wait, "local_fsync", d.LocalFsync}
	if len(d.Nodes) == 0 {
		return attrs
	}
	for _, k := range []string{"appendonly", "appendfsync", "save", "maxmemory-policy"} {
		if v, ok := d.Nodes[0].Config[k]; ok {
			attrs = append(attrs, strings.ReplaceAll(k, "-", "_"), v)
		}
	}
	return attrs
}
