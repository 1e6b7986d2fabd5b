package settings

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/urfave/cli/v3"

	"github.com/shardpipe/shardpipe/admin"
	"github.com/shardpipe/shardpipe/cmd/shardpipe/internal/cliflags"
	"github.com/shardpipe/shardpipe/cmd/shardpipe/internal/flagcheck"
	"github.com/shardpipe/shardpipe/pipeline"
)

// Flag names of the durability settings that allow a risk; the refusals
// of admin.CheckDurability name them.
const (
	FlagAllowEviction      = "redis-allow-eviction"
	FlagAllowNoPersistence = "redis-allow-no-persistence"
)

const fRedisReplicas = "redis-replicas"

// DurabilityGroup is the durability flags, loaded into dc: what the
// ledger's Redis must promise before a commit (dc's Name and FenceKey are
// for the caller to set). Any deployment takes them: on Redis Cluster the
// wait runs on every primary.
func DurabilityGroup(dc *admin.DurabilityConfig) cliflags.Group {
	return cliflags.NewGroup(func(c *cli.Command, bad *cliflags.Problems) {
		dc.Replicas = IntIn(c, bad, fRedisReplicas, flagcheck.In(0, 100, ""))
		dc.AllowEviction, dc.AllowNoPersistence = c.Bool(FlagAllowEviction), c.Bool(FlagAllowNoPersistence)
	},
		&cli.IntFlag{Name: fRedisReplicas,
			Usage: "commit an offset only once this many Redis replicas hold the ledger writes before it (WAITAOF: fsynced there; Redis before 7.2: WAIT, received; on Redis Cluster: replicas of every primary), so a failover loses none; commits wait while fewer replicas answer (0: wait for none)"},
		&cli.BoolFlag{Name: FlagAllowEviction,
			Usage: "start although the ledger Redis's maxmemory-policy may evict keys (anything but noeviction; ledger keys carry a TTL, so volatile-* evicts them too): RISK: a record whose ledger key was evicted applies its effect again"},
		&cli.BoolFlag{Name: FlagAllowNoPersistence,
			Usage: "start although the ledger Redis persists nothing (appendonly no and no save points): RISK: a Redis restart forgets the ledger and the effects written with it while offsets stay committed past them: those effects are lost, not replayed"})
}

// CheckDurability checks the ledger Redis's persistence and eviction
// settings (admin.CheckDurability) within timeout, logs each risk dc accepted as a
// warning that names the flag behind it, and returns the barrier every
// commit waits for (nil when there is nothing to wait for). A setting that
// breaks a ledger and that dc does not allow is admin's error, unchanged
// (admin.ErrEviction, admin.ErrNoPersistence).
func CheckDurability(ctx context.Context, rdb redis.UniversalClient, dc admin.DurabilityConfig, timeout time.Duration,
	log *slog.Logger) (pipeline.Barrier, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	d, err := admin.CheckDurability(ctx, rdb, dc)
	for _, r := range d.Risks {
		msg := r.Message
		switch {
		case errors.Is(r.Err, admin.ErrEviction):
			msg = "redis may evict ledger keys, allowed by --redis-allow-eviction: a record whose key was evicted applies again"
		case errors.Is(r.Err, admin.ErrNoPersistence):
			msg = "redis persists nothing, allowed by --redis-allow-no-persistence: a restart loses the ledger and its effects"
		case r.Setting == "replicas":
			msg = "fewer redis replicas connected than --redis-replicas: commits wait until enough of them hold the writes"
		}
		log.Warn(msg, append([]any{"redis", r.Addr}, r.Attrs...)...)
	}
	if err != nil {
		return nil, err
	}
	log.Info("redis durability", append(d.Attrs(), "redis", dc.Name, "replicas", dc.Replicas)...)
	return d.Barrier, nil
}
