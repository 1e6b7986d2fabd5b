package chaos

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/shardpipe/shardpipe/internal/harness/chaoscheck"
	"github.com/shardpipe/shardpipe/internal/harness/clusters"
)

// clusterFault performs a Redis or broker fault on the clusters: a master
// failover, or a broker SIGKILL.
func (r *runner) clusterFault(ctx context.Context, s step) error {
	if s.Kind == faultBroker {
		return r.brokerKill(ctx, s.Down)
	}
	return r.masterFailover(ctx, s.Down)
}

// masterFailover SIGKILLs the master serving the ledger's slot (with
// --effect totals every ledger key and the totals hash are there), waits
// for its replica to take over, and starts it again after down, when it
// rejoins as the new master's replica. Its effect: the new master kept a
// marker written (and replicated, WAIT 1) before the kill, and the
// consumers write to it again.
func (r *runner) masterFailover(ctx context.Context, down time.Duration) error {
	rc := r.cfg.Cluster.redis
	shard, err := rc.ShardOf(ctx, r.prefix)
	if err != nil {
		return err
	}
	if len(shard.Replicas) == 0 {
		r.noEffect("redis failover: master node %d has no replica to take over", shard.Master)
		return nil
	}
	replica := shard.Replicas[0]
	mark, err := r.markShard(ctx, shard)
	if err != nil {
		return err
	}
	r.logf("SIGKILL redis master node %d (the ledger's slot); its replica node %d takes over; the old master restarts after %v",
		shard.Master, replica, down)
	if err := rc.Kill(ctx, shard.Master); err != nil {
		return err
	}
	from := time.Now()
	r.faults.Failovers++
	if err := rc.AwaitMaster(ctx, replica, 0, time.Minute); err != nil {
		r.noEffect("redis failover: %v", err)
	}
	took := time.Since(from)
	r.redisDown = append(r.redisDown, chaoscheck.Window{From: from, To: time.Now()})
	if err := sleep(ctx, down-took); err != nil {
		return err
	}
	if err := rc.Start(ctx); err != nil {
		return err
	}
	r.logf("node %d took over in %v; node %d is back as its replica", replica, took.Round(time.Millisecond), shard.Master)
	if r.clusterRecovered(ctx, "redis failover", mark, replica) {
		r.faults.FailoversSeen++
	}
	return nil
}

// shardOutage is the guard pass's Redis outage on the cluster: both nodes
// of one shard SIGKILLed (the cluster then refuses every write), started
// again by restartRedis.
func (r *runner) shardOutage(ctx context.Context) (redisMark, error) {
	rc := r.cfg.Cluster.redis
	shards, err := rc.Shards(ctx)
	if err != nil || len(shards) == 0 {
		return redisMark{}, fmt.Errorf("chaos: the cluster's shards: %v", err)
	}
	shard := shards[0]
	mark, err := r.markShard(ctx, shard)
	if err != nil {
		return mark, err
	}
	for _, n := range append([]int{shard.Master}, shard.Replicas...) {
		if err := rc.Kill(ctx, n); err != nil {
			return mark, err
		}
	}
	mark.node = shard.Master
	return mark, nil
}

// brokerKill SIGKILLs the broker that leads the most partitions of the
// topic (the group's coordinator when it leads two or more) and starts it
// again after down (at least 5s). Its effect: every leadership moved to
// the other two, and the commit watcher read the group's offsets while it
// was down.
func (r *runner) brokerKill(ctx context.Context, down time.Duration) error {
	k := r.cfg.Cluster.kafka
	node, parts, coord, err := clusters.Victim(ctx, r.adm, r.group, r.topic)
	if err != nil {
		return err
	}
	down = max(down, 5*time.Second)
	r.logf("SIGKILL broker %d, the leader of partitions %v (the group's coordinator: %t); restart after %v", node, parts, coord, down)
	if err := k.Kill(ctx, int(node)); err != nil {
		return err
	}
	from := time.Now()
	r.faults.BrokerKills++
	_, err = k.AwaitLeadersOff(ctx, r.topic, node, time.Minute)
	_, p1 := r.watcher.Decreases()
	moved := time.Since(from)
	if serr := sleep(ctx, down-moved); serr != nil {
		return serr
	}
	_, p2 := r.watcher.Decreases()
	if err := k.Start(ctx); err != nil {
		return err
	}
	r.logf("broker %d back; its partitions had new leaders after %v", node, moved.Round(time.Millisecond))
	switch {
	case err != nil:
		r.noEffect("broker kill: %v", err)
	case p2.Seen == p1.Seen:
		r.noEffect("broker kill: the watcher read no committed offset in the %v broker %d was down after its partitions moved (%d polls, %d failed)",
			(down - moved).Round(time.Millisecond), node, p2.Made-p1.Made, p2.Failed-p1.Failed)
	default:
		r.faults.BrokerKillsSeen++
	}
	return nil
}

// markShard writes a marker key into one of shard's slots on its master,
// and waits (WAIT 1) until its replica holds it too, so that it must
// survive the master's death. The mark holds the key and the run IDs of
// the shard's nodes.
func (r *runner) markShard(ctx context.Context, shard clusters.Shard) (redisMark, error) {
	rc := r.cfg.Cluster.redis
	key := ""
	for i := 0; key == ""; i++ {
		k := fmt.Sprintf("{%s-chaos-%d}:marker", r.topic, i)
		for _, rg := range shard.Slots {
			if s := clusters.Slot(k); s >= rg[0] && s <= rg[1] {
				key = k
			}
		}
	}
	var ids []string
	for _, n := range append([]int{shard.Master}, shard.Replicas...) {
		c := nodeClient(rc.Addrs[n-1])
		id, err := serverRunID(ctx, c)
		_ = c.Close()
		if err != nil {
			return redisMark{}, fmt.Errorf("chaos: run ID of redis node %d: %w", n, err)
		}
		ids = append(ids, id)
	}
	m := redisMark{key: key, runID: strings.Join(ids, ",")}
	c := nodeClient(rc.Addrs[shard.Master-1])
	defer c.Close()
	conn := c.Conn()
	defer conn.Close()
	p := conn.Pipeline()
	p.Set(ctx, key, m.runID, 0)
	wait := p.Do(ctx, "WAIT", 1, 5000)
	if _, err := p.Exec(ctx); err != nil {
		return m, fmt.Errorf("chaos: mark redis node %d before the fault: %w", shard.Master, err)
	}
	if n, err := wait.Int64(); err != nil || n < 1 {
		return m, fmt.Errorf("chaos: the marker on node %d reached %d replicas (%v), want 1", shard.Master, n, err)
	}
	m.node = shard.Master
	return m, nil
}

// clusterRecovered checks a Redis fault's effect on the cluster: the
// marker written before it is there, node master serves its slot (0: any),
// the shard's nodes are new processes (another run ID) when master is 0,
// and the consumers write again within 30s (the keys of the run grow).
func (r *runner) clusterRecovered(ctx context.Context, what string, before redisMark, master int) bool {
	rc := r.cfg.Cluster.redis
	c := rc.Client()
	defer c.Close()
	if got, err := c.Get(ctx, before.key).Result(); err != nil || got != before.runID {
		r.noEffect("%s: the marker written (and replicated) before the fault reads %q (%v) after it: lost", what, got, err)
		return false
	}
	shard, err := rc.ShardOf(ctx, before.key)
	if err != nil || master != 0 && shard.Master != master {
		r.noEffect("%s: the marker's slot is served by %+v (%v), want node %d", what, shard, err, master)
		return false
	}
	if master == 0 {
		mc := nodeClient(rc.Addrs[shard.Master-1])
		id, err := serverRunID(ctx, mc)
		_ = mc.Close()
		if err != nil || strings.Contains(before.runID, id) {
			r.noEffect("%s: node %d has run ID %q (%v), as before the fault: not a new process", what, shard.Master, id, err)
			return false
		}
	}
	n0, err := countKeys(ctx, c)
	deadline := time.Now().Add(30 * time.Second)
	for err == nil {
		var n int64
		if n, err = countKeys(ctx, c); err == nil && n > n0 {
			return true
		}
		if time.Now().After(deadline) {
			break
		}
		err = sleep(ctx, 100*time.Millisecond) // polls the key count; no event to wait on
	}
	r.noEffect("%s: no new key in the cluster within 30s (%v): the consumers did not resume", what, err)
	return false
}

// countKeys sums DBSIZE over the cluster's masters.
func countKeys(ctx context.Context, c *redis.ClusterClient) (int64, error) {
	c.ReloadState(ctx)
	var mu sync.Mutex
	var total int64
	err := c.ForEachMaster(ctx, func(ctx context.Context, n *redis.Client) error {
		k, err := n.DBSize(ctx).Result()
		mu.Lock()
		total += k
		mu.Unlock()
		return err
	})
	return total, err
}
