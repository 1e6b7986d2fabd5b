package sink

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"

	"github.com/redis/go-redis/v9"
)

// primary is a shard's primary: its node ID and a slot it serves.
type primary struct {
	id   string
	slot int
}

// primaries asks one node which primaries serve slots (CLUSTER SHARDS,
// Redis 7.0+), one per shard; none is an error.
func (d *Durable) primaries(ctx context.Context) ([]primary, error) {
	shards, err := d.cluster.ClusterShards(ctx).Result()
	if err != nil {
		return nil, fmt.Errorf("CLUSTER SHARDS: %w", err)
	}
	var ps []primary
	for _, s := range shards {
		i := slices.IndexFunc(s.Nodes, func(n redis.Node) bool { return n.Role == "master" })
		if len(s.Slots) > 0 && i >= 0 {
			ps = append(ps, primary{id: s.Nodes[i].ID, slot: int(s.Slots[0].Start)})
		}
	}
	if len(ps) == 0 {
		return nil, errors.New("CLUSTER SHARDS names no primary")
	}
	return ps, nil
}

// waitCluster fences and waits on every primary that serves slots, at once.
// A primary that cannot be asked (killed, not yet replaced) or that no
// longer serves the fence's slot fails the wait, and the client's view of
// the cluster is reloaded for the next call.
func (d *Durable) waitCluster(ctx context.Context) error {
	ps, err := d.primaries(ctx)
	if err != nil {
		return fmt.Errorf("sink: durability wait: %w", err)
	}
	errs := make([]error, len(ps))
	seen := make([]bool, len(ps))
	primed := d.prim.isPrimed()
	var wg sync.WaitGroup
	for i, p := range ps {
		wg.Go(func() {
			key := d.cfg.FenceKey + "{" + d.tags.forSlot(p.slot) + "}"
			node, err := d.cluster.MasterForKey(ctx, key)
			if err != nil {
				errs[i] = fmt.Errorf("sink: durability wait: the primary of slot %d: %w", p.slot, err)
				return
			}
			seen[i], errs[i] = d.waitOn(ctx, node, key, p.id, primed)
		})
	}
	wg.Wait()
	if !primed && !slices.Contains(seen, false) {
		d.prim.setPrimed() // every primary's identity is the baseline now
	}
	err = errors.Join(errs...)
	if err != nil && !onlyNotDurable(errs) && !errors.Is(err, ErrWritesLost) {
		d.cluster.ReloadState(ctx)
	}
	return err
}

// onlyNotDurable reports whether every error of errs is nil or ErrNotDurable.
func onlyNotDurable(errs []error) bool {
	for _, err := range errs {
		if err != nil && !errors.Is(err, ErrNotDurable) {
			return false
		}
	}
	return true
}

// tagCache finds, per slot, a hash tag (a decimal number) that hashes to
// that slot, and remembers it. The first search for a slot tries tags from
// 0 up: about 16384 CRC16s of short strings at worst.
type tagCache struct {
	mu   sync.Mutex
	tags map[int]string
}

func (c *tagCache) forSlot(want int) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if t, ok := c.tags[want]; ok {
		return t
	}
	if c.tags == nil {
		c.tags = make(map[int]string)
	}
	for n := 0; ; n++ {
		t := strconv.Itoa(n)
		if int(slot(t)) == want {
			c.tags[want] = t
			return t
		}
	}
}
