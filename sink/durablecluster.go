package sink

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
)

// waitCluster fences and waits on every primary that serves slots, at once.
// A primary that cannot be asked (killed, not yet replaced) or that no
// longer serves the fence's slot fails the wait, and the client's view of
// the cluster is reloaded for the next call.
func (d *Durable) waitCluster(ctx context.Context) error {
	slots, err := d.cluster.ClusterSlots(ctx).Result()
	if err != nil {
		return fmt.Errorf("sink: durability wait: CLUSTER SLOTS: %w", err)
	}
	type primary struct {
		id   string
		slot int
	}
	var ps []primary
	named := map[string]bool{}
	for _, s := range slots {
		if len(s.Nodes) == 0 || named[s.Nodes[0].ID] {
			continue
		}
		named[s.Nodes[0].ID] = true
		ps = append(ps, primary{id: s.Nodes[0].ID, slot: s.Start})
	}
	if len(ps) == 0 {
		return errors.New("sink: durability wait: CLUSTER SLOTS names no primary")
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
