package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/urfave/cli/v3"

	"github.com/shardpipe/shardpipe/pipeline"
	"github.com/shardpipe/shardpipe/sink"
)

// Flag names of the ledger Redis's durability; run and replay share them.
const (
	fRedisReplicas      = "redis-replicas"
	fAllowEviction      = "redis-allow-eviction"
	fAllowNoPersistence = "redis-allow-no-persistence"
)

func durabilityFlags() []cli.Flag {
	return []cli.Flag{
		&cli.IntFlag{Name: fRedisReplicas, Sources: fromEnv(fRedisReplicas),
			Usage: "commit an offset only once this many Redis replicas hold the ledger writes before it (WAITAOF: fsynced there; Redis before 7.2: WAIT, received; on Redis Cluster: replicas of every primary), so a failover loses none; commits wait while fewer replicas answer (0: wait for none)"},
		&cli.BoolFlag{Name: fAllowEviction, Sources: fromEnv(fAllowEviction),
			Usage: "start although the ledger Redis's maxmemory-policy may evict keys (anything but noeviction; ledger keys carry a TTL, so volatile-* evicts them too): RISK: a record whose ledger key was evicted applies its effect again"},
		&cli.BoolFlag{Name: fAllowNoPersistence, Sources: fromEnv(fAllowNoPersistence),
			Usage: "start although the ledger Redis persists nothing (appendonly no and no save points): RISK: a Redis restart forgets the ledger and the effects written with it while offsets stay committed past them: those effects are lost, not replayed"},
	}
}

// durabilityConfig is what the ledger's Redis must promise before a commit.
type durabilityConfig struct {
	replicas           int
	allowEviction      bool
	allowNoPersistence bool
}

// loadDurabilityConfig reads the durability flags. Any deployment takes
// them: on Redis Cluster the wait runs on every primary.
func loadDurabilityConfig(c *cli.Command, bad *problems, _ bool) durabilityConfig {
	dc := durabilityConfig{replicas: int(c.Int(fRedisReplicas)), allowEviction: c.Bool(fAllowEviction),
		allowNoPersistence: c.Bool(fAllowNoPersistence)}
	if dc.replicas < 0 {
		bad.addf("%s %d: must be 0 or more", flagRef(fRedisReplicas), dc.replicas)
	}
	return dc
}

// fenceKey is the key the durability barrier writes before each wait:
// under the dead-letter prefix, which is kept apart from the ledger's.
func fenceKey(dlqPrefix string) string { return dlqPrefix + "fence" }

// waitAOF is what a WAITAOF probe found.
type waitAOF uint8

const (
	waitAOFAbsent  waitAOF = iota // unknown command: Redis before 7.2
	waitAOFOn                     // WAITAOF answered: appendonly yes
	waitAOFOff                    // WAITAOF refused numlocal: appendonly no
	waitAOFRefused                // NOPERM: the ACL user may not run it
)

// redisDurability reads the ledger Redis's persistence and eviction settings
// (CONFIG GET appendonly appendfsync save maxmemory-policy) and whether it
// has WAITAOF, refuses the settings that break a ledger (usage error: exit
// 2) unless dc allows them, logs what the rest risks, and returns the
// barrier every commit waits for (nil when there is nothing to wait for).
// A server whose ACL refuses CONFIG GET is said to be not checked.
func redisDurability(ctx context.Context, rdb redis.UniversalClient, desc string, dc durabilityConfig, fence string,
	timeout time.Duration, log *slog.Logger) (pipeline.Barrier, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
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
			return nil, unavailableErr(fmt.Sprintf("redis cluster %s: reading the nodes failed: %v", desc, err))
		}
	default:
		return nil, nil
	}
	var usage []string
	var all []settings
	for _, n := range nodes {
		addr := n.Options().Addr
		if len(nodes) == 1 {
			addr = desc
		}
		s, err := readSettings(ctx, n)
		if err != nil {
			return nil, unavailableErr(fmt.Sprintf("redis %s: reading its persistence settings: %v", addr, err))
		}
		usage = append(usage, s.judge(addr, dc, log)...)
		all = append(all, s)
	}
	if len(usage) > 0 {
		return nil, usageErr(usage...)
	}
	return weakest(all).barrier(ctx, rdb, desc, dc, fence, log)
}

// settings is what one server told about its persistence.
type settings struct {
	config    map[string]string // CONFIG GET's fields; nil when refused
	configErr error
	waitAOF   waitAOF
	probeErr  error
}

// readSettings probes WAITAOF (numlocal 1, 1 ms: a fresh connection has no
// writes to wait for, so it answers at once, or refuses when appendonly is
// off) and reads CONFIG GET. A reply error is kept; no answer is an error.
func readSettings(ctx context.Context, c *redis.Client) (settings, error) {
	var s settings
	err := c.Do(ctx, "WAITAOF", 1, 0, 1).Err()
	var rerr redis.Error
	switch {
	case err == nil:
		s.waitAOF = waitAOFOn
	case !errors.As(err, &rerr):
		return s, err
	case strings.Contains(err.Error(), "appendonly is disabled"):
		s.waitAOF = waitAOFOff
	case strings.HasPrefix(err.Error(), "NOPERM"):
		s.waitAOF, s.probeErr = waitAOFRefused, err
	default:
		s.waitAOF, s.probeErr = waitAOFAbsent, err
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
			s.configErr = err
			return s, nil
		default:
			return s, err
		}
	}
	if len(m) == 0 {
		s.configErr = errors.New("CONFIG GET answered no fields")
		return s, nil
	}
	s.config = m
	return s, nil
}

// judge returns one usage line per setting that breaks the ledger and is not
// allowed by dc, and logs a warning for each risk it accepts.
func (s settings) judge(addr string, dc durabilityConfig, log *slog.Logger) []string {
	if s.config == nil {
		log.Warn("redis CONFIG GET refused: maxmemory-policy, appendonly, appendfsync and save not checked; make sure the ledger's Redis uses maxmemory-policy noeviction and appendonly yes",
			"redis", addr, "err", s.configErr)
		return nil
	}
	var usage []string
	if p, ok := s.config["maxmemory-policy"]; ok && p != "noeviction" {
		if !dc.allowEviction {
			usage = append(usage, fmt.Sprintf("redis %s: maxmemory-policy is %s: Redis may evict ledger keys when memory runs short (they carry a TTL, so volatile-* policies evict them too), and a record whose key was evicted applies its effect again; set maxmemory-policy noeviction (CONFIG SET and redis.conf), or pass %s to accept that",
				addr, p, flagRef(fAllowEviction)))
		} else {
			log.Warn("redis may evict ledger keys, allowed by --redis-allow-eviction: a record whose key was evicted applies again",
				"redis", addr, "setting", "maxmemory-policy is "+p)
		}
	}
	aof, save := s.config["appendonly"], strings.TrimSpace(s.config["save"])
	_, haveSave := s.config["save"]
	switch {
	case aof == "no" && haveSave && save == "":
		if !dc.allowNoPersistence {
			usage = append(usage, fmt.Sprintf(`redis %s: appendonly no and save "": Redis persists nothing, so a restart forgets the ledger and the effects written with it while the offsets stay committed past them (lost, not replayed); set appendonly yes with appendfsync always (or everysec on Redis 7.2+ or Valkey, where commits wait for the fsync), or pass %s to accept that`,
				addr, flagRef(fAllowNoPersistence)))
		} else {
			log.Warn("redis persists nothing, allowed by --redis-allow-no-persistence: a restart loses the ledger and its effects",
				"redis", addr, "setting", "appendonly no, no save points")
		}
	case aof == "no" && haveSave:
		log.Warn("redis persists by RDB snapshots only: a crash loses the ledger writes since the last snapshot, and their effects with them, while the offsets were committed past them; set appendonly yes",
			"redis", addr, "appendonly", aof, "save", save)
	case aof == "yes" && s.config["appendfsync"] == "everysec" && s.waitAOF != waitAOFOn:
		log.Warn("redis appendfsync everysec and no WAITAOF (Redis before 7.2, or refused by its ACL): a crash of the Redis host (power, kernel) can lose the last second of ledger writes (up to two when the disk is slow) after their offsets were committed: those effects are lost, not replayed; set appendfsync always, or use Redis 7.2+ or Valkey so that commits wait for the fsync",
			"redis", addr, "appendfsync", "everysec")
	case aof == "yes" && s.config["appendfsync"] == "no":
		log.Warn("redis appendfsync no: Redis never fsyncs the AOF itself (the OS writes it out, often within 30s), so a crash of the host can lose that much of the ledger after the offsets were committed, and commits cannot wait for it; set appendfsync always or everysec",
			"redis", addr, "appendfsync", "no")
	}
	return usage
}

// barrier returns what commits wait for on this single server, logging it.
func (s settings) barrier(ctx context.Context, rdb redis.UniversalClient, desc string, dc durabilityConfig, fence string, log *slog.Logger) (pipeline.Barrier, error) {
	cfg := sink.DurableConfig{FenceKey: fence, Replicas: dc.replicas, Timeout: 2 * time.Second}
	if rt := readTimeout(rdb); rt > 0 && rt <= cfg.Timeout {
		cfg.Timeout = rt * 2 / 3 // the wait must end before the client stops reading
	}
	wait := "none"
	switch s.waitAOF {
	case waitAOFOn:
		// appendfsync no never fsyncs by itself: a local wait would hold
		// every commit forever (warned about in judge).
		cfg.LocalFsync = s.config["appendfsync"] != "no"
		wait = "WAITAOF"
	case waitAOFOff:
		wait = "WAITAOF"
	case waitAOFRefused:
		log.Warn("redis refused WAITAOF (ACL): commits cannot wait for the ledger writes' fsync", "redis", desc, "err", s.probeErr)
		cfg.UseWait, wait = true, "WAIT"
	default:
		cfg.UseWait, wait = true, "WAIT"
	}
	if dc.replicas > 0 {
		if n, err := fewestReplicas(ctx, rdb); err == nil && n < dc.replicas {
			log.Warn("fewer redis replicas connected than --redis-replicas: commits wait until enough of them hold the writes",
				"redis", desc, "connected", n, "want", dc.replicas)
		}
	}
	attrs := []any{"redis", desc, "local_fsync", cfg.LocalFsync, "replicas", dc.replicas}
	for _, k := range []string{"appendonly", "appendfsync", "save", "maxmemory-policy"} {
		if v, ok := s.config[k]; ok {
			attrs = append(attrs, strings.ReplaceAll(k, "-", "_"), v)
		}
	}
	if !cfg.LocalFsync && cfg.Replicas == 0 {
		log.Info("redis durability", append([]any{"wait", "none"}, attrs...)...)
		return nil, nil
	}
	if cfg.UseWait {
		wait = "WAIT"
	}
	log.Info("redis durability", append([]any{"wait", wait}, attrs...)...)
	d, err := sink.NewDurable(rdb, cfg)
	if err != nil {
		return nil, failure(err)
	}
	if err := d.Prime(ctx); err != nil {
		log.Warn("redis durability: could not read which primaries the ledger writes go to; the first wait will, and a failover before it goes unnoticed",
			"redis", desc, "err", err)
	}
	return d, nil
}

// connectedReplicas reads connected_slaves from INFO replication.
func connectedReplicas(ctx context.Context, c *redis.Client) (int, error) {
	info, err := redisInfo(ctx, c, "replication")
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(info["connected_slaves"])
}
