package clusters

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"
)

// Redis is a Redis Cluster of six nodes (three masters with one replica
// each) run by scripts/services.sh. Nodes are numbered 1 to 6 as the
// script numbers them; which of them is a master changes with failovers.
type Redis struct {
	s     script
	Addrs []string // the nodes' host:port, node N at index N-1
}

// StartRedis starts a Redis Cluster with its state in dir (a directory of
// its own) and waits until every node reports the cluster ok. env holds
// services.sh settings (KEY=VALUE), e.g. SHARDPIPE_REDIS_APPENDFSYNC=always.
func StartRedis(ctx context.Context, root, dir string, env ...string) (*Redis, error) {
	r := &Redis{s: script{root: root, dir: dir, env: env}}
	if err := r.s.start(ctx, "redis-cluster"); err != nil {
		return nil, err
	}
	addrs, err := r.s.variable(ctx, "REDIS_CLUSTER_ADDRS")
	if err != nil {
		return nil, err
	}
	r.Addrs = strings.Split(addrs, ",")
	return r, nil
}

// Start starts the nodes that are down (after Kill or Stop), on their ports
// and with their data, and waits until the cluster is whole again: every
// node reports cluster_state:ok and every replica's link is up.
func (r *Redis) Start(ctx context.Context) error {
	_, err := r.s.run(ctx, "start", "redis-cluster")
	return err
}

// Stop stops every node gracefully.
func (r *Redis) Stop(ctx context.Context) error {
	_, err := r.s.run(ctx, "stop", "redis-cluster")
	return err
}

// Kill sends SIGKILL to node n and waits until it is gone.
func (r *Redis) Kill(ctx context.Context, n int) error {
	_, err := r.s.run(ctx, "kill", "redis-cluster", strconv.Itoa(n))
	return err
}

// Signal sends sig (SIGSTOP, SIGCONT) to node n.
func (r *Redis) Signal(n int, sig syscall.Signal) error {
	return r.s.signal(fmt.Sprintf("redis-cluster/node-%d/redis.pid", n), sig)
}

// Node returns the number of the node at addr, 0 when none is.
func (r *Redis) Node(addr string) int {
	for i, a := range r.Addrs {
		if a == addr {
			return i + 1
		}
	}
	return 0
}

// Client returns a new cluster client of the nodes; the caller closes it.
func (r *Redis) Client() *redis.ClusterClient {
	return redis.NewClusterClient(&redis.ClusterOptions{Addrs: r.Addrs})
}

// node returns a client of node n alone; the caller closes it.
func (r *Redis) node(n int) *redis.Client {
	return redis.NewClient(&redis.Options{Addr: r.Addrs[n-1], MaxRetries: -1})
}

// Shard is a master and its replicas as one live node sees them.
type Shard struct {
	Master   int    // node number
	MasterID string // cluster node ID
	Replicas []int
	Slots    [][2]int // slot ranges, inclusive
}

// Shards reads CLUSTER SHARDS-like facts from CLUSTER NODES of the first
// node that answers: each master with its slots and replicas. Nodes marked
// failed are left out.
func (r *Redis) Shards(ctx context.Context) ([]Shard, error) {
	var last error
	for n := 1; n <= len(r.Addrs); n++ {
		c := r.node(n)
		out, err := c.ClusterNodes(ctx).Result()
		_ = c.Close()
		if err != nil {
			last = err
			continue
		}
		return r.parseNodes(out)
	}
	return nil, fmt.Errorf("no node answered CLUSTER NODES: %w", last)
}

func (r *Redis) parseNodes(out string) ([]Shard, error) {
	type line struct {
		id, addr, flags, master string
		slots                   [][2]int
	}
	var lines []line
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Fields(l)
		if len(f) < 8 {
			continue
		}
		addr, _, _ := strings.Cut(f[1], "@")
		ln := line{id: f[0], addr: addr, flags: f[2], master: f[3]}
		for _, s := range f[8:] {
			if strings.HasPrefix(s, "[") { // a slot being migrated
				continue
			}
			a, b, ok := strings.Cut(s, "-")
			if !ok {
				b = a
			}
			lo, err1 := strconv.Atoi(a)
			hi, err2 := strconv.Atoi(b)
			if err1 != nil || err2 != nil {
				return nil, fmt.Errorf("CLUSTER NODES slot %q", s)
			}
			ln.slots = append(ln.slots, [2]int{lo, hi})
		}
		lines = append(lines, ln)
	}
	var shards []Shard
	byID := map[string]int{}
	for _, l := range lines {
		if strings.Contains(l.flags, "master") && !strings.Contains(l.flags, "fail") && len(l.slots) > 0 {
			byID[l.id] = len(shards)
			shards = append(shards, Shard{Master: r.Node(l.addr), MasterID: l.id, Slots: l.slots})
		}
	}
	for _, l := range lines {
		if i, ok := byID[l.master]; ok && strings.Contains(l.flags, "slave") && !strings.Contains(l.flags, "fail") {
			shards[i].Replicas = append(shards[i].Replicas, r.Node(l.addr))
		}
	}
	return shards, nil
}

// ShardOf returns the shard that serves key's slot.
func (r *Redis) ShardOf(ctx context.Context, key string) (Shard, error) {
	shards, err := r.Shards(ctx)
	if err != nil {
		return Shard{}, err
	}
	slot := Slot(key)
	for _, s := range shards {
		for _, rg := range s.Slots {
			if slot >= rg[0] && slot <= rg[1] {
				return s, nil
			}
		}
	}
	return Shard{}, fmt.Errorf("no master serves slot %d (key %q)", slot, key)
}

// AwaitMaster waits, at most d, until node n is a master serving slots
// with at least replicas replicas (a replica taking over after its master
// was killed; 0 replicas while the old master is down).
func (r *Redis) AwaitMaster(ctx context.Context, n, replicas int, d time.Duration) error {
	return poll(ctx, d, 100*time.Millisecond, fmt.Sprintf("node %d a master with %d replica(s)", n, replicas), func() (bool, error) {
		shards, err := r.Shards(ctx)
		if err != nil {
			return false, err
		}
		for _, s := range shards {
			if s.Master == n && len(s.Replicas) >= replicas {
				return r.clusterOK(ctx)
			}
		}
		return false, nil
	})
}

// clusterOK reports whether every live node says cluster_state:ok.
func (r *Redis) clusterOK(ctx context.Context) (bool, error) {
	for n := 1; n <= len(r.Addrs); n++ {
		c := r.node(n)
		info, err := c.ClusterInfo(ctx).Result()
		_ = c.Close()
		if err != nil {
			continue // a node that is down
		}
		if !strings.Contains(info, "cluster_state:ok") {
			return false, nil
		}
	}
	return true, nil
}

// Reshard moves slots slots from master node from to master node to with
// `redis-cli --cluster reshard`, pipeline keys per MIGRATE: while it runs,
// a slot being moved answers ASK for its keys already moved, and a moved
// slot answers MOVED to clients that still map it to from.
func (r *Redis) Reshard(ctx context.Context, from, to Shard, slots, pipeline int) error {
	cmd := exec.CommandContext(ctx, "redis-cli", "--cluster", "reshard", r.Addrs[from.Master-1],
		"--cluster-from", from.MasterID, "--cluster-to", to.MasterID, "--cluster-slots", strconv.Itoa(slots),
		"--cluster-pipeline", strconv.Itoa(pipeline), "--cluster-yes")
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("redis-cli --cluster reshard: %w\n%s", err, out)
	}
	return nil
}

// ErrorStats sums, per error code (MOVED, ASK, TRYAGAIN, ...), the error
// replies every live node has sent (INFO errorstats), so a test can show
// that redirections happened.
func (r *Redis) ErrorStats(ctx context.Context) (map[string]int64, error) {
	out := map[string]int64{}
	var errs []error
	for n := 1; n <= len(r.Addrs); n++ {
		c := r.node(n)
		info, err := c.Info(ctx, "errorstats").Result()
		_ = c.Close()
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, l := range strings.Split(info, "\n") {
			k, v, ok := strings.Cut(strings.TrimSpace(l), ":count=")
			if name, isStat := strings.CutPrefix(k, "errorstat_"); ok && isStat {
				n, _ := strconv.ParseInt(v, 10, 64)
				out[name] += n
			}
		}
	}
	if len(errs) == len(r.Addrs) {
		return nil, errors.Join(errs...)
	}
	return out, nil
}

// Slot is the Redis Cluster hash slot of key (CRC16 of its {hash tag} or
// the whole key, mod 16384).
func Slot(key string) int {
	if i := strings.IndexByte(key, '{'); i >= 0 {
		if j := strings.IndexByte(key[i+1:], '}'); j > 0 {
			key = key[i+1 : i+1+j]
		}
	}
	var crc uint16
	for i := 0; i < len(key); i++ {
		crc ^= uint16(key[i]) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return int(crc % 16384)
}
