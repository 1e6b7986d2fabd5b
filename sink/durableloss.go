package sink

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/redis/go-redis/v9"
)

// primaries remembers, per primary the ledger writes go to (by cluster node
// ID; "" for a single server), which server process and replication history
// it was at the last wait: its run ID and replication ID. A replica that
// takes over gets a new replication ID (and is another node); a restarted
// server a new run ID. Either may have lost writes the previous one
// acknowledged, so a change counts a loss.
type primaries struct {
	mu     sync.Mutex
	seen   map[string]string // node ID -> run_id/master_replid
	primed bool              // seen holds a complete first observation
	losses atomic.Uint64
}

// observe records primary id's identity. It reports a loss when the
// baseline is primed and id is new or changed.
func (p *primaries) observe(id, ident string, primed bool) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.seen == nil {
		p.seen = make(map[string]string)
	}
	old, ok := p.seen[id]
	p.seen[id] = ident
	if !primed || ok && old == ident {
		return false
	}
	p.losses.Add(1)
	return true
}

func (p *primaries) isPrimed() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.primed
}

func (p *primaries) setPrimed() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.primed = true
}

// Losses returns how many times a wait found a primary of the ledger's
// Redis changed since the wait before (a replica that took over, a server
// restarted), each time returning an error wrapping ErrWritesLost. It only
// grows. pipeline.LossReporter reads it: a worker whose records landed
// before a loss applies them again before committing past them.
func (d *Durable) Losses() uint64 { return d.prim.losses.Load() }

// Prime reads which server (or, on a cluster, which primaries) the ledger
// writes go to now: the baseline the first Wait compares with. Call it
// before the first write; without it the first Wait sets the baseline and
// cannot see a failover between the first writes and itself.
func (d *Durable) Prime(ctx context.Context) error {
	if d.single != nil {
		ident, err := identity(d.single.Info(ctx, "server", "replication"))
		if err != nil {
			return fmt.Errorf("sink: durability prime: %w", err)
		}
		d.prim.observe("", ident, false)
		d.prim.setPrimed()
		return nil
	}
	ps, err := d.primaries(ctx)
	if err != nil {
		return fmt.Errorf("sink: durability prime: %w", err)
	}
	for _, s := range ps {
		node, err := d.cluster.MasterForKey(ctx, d.cfg.FenceKey+"{"+d.tags.forSlot(s.slot)+"}")
		if err != nil {
			return fmt.Errorf("sink: durability prime: the primary of slot %d: %w", s.slot, err)
		}
		p := node.Pipeline()
		info := p.Info(ctx, "server", "replication")
		myID := p.ClusterMyID(ctx)
		if _, err := p.Exec(ctx); err != nil {
			return fmt.Errorf("sink: durability prime: %s: %w", node.Options().Addr, err)
		}
		if myID.Val() != s.id {
			return fmt.Errorf("sink: durability prime: %s is node %s, CLUSTER SHARDS names %s", node.Options().Addr, myID.Val(), s.id)
		}
		ident, err := identity(info)
		if err != nil {
			return fmt.Errorf("sink: durability prime: %s: %w", node.Options().Addr, err)
		}
		d.prim.observe(s.id, ident, false)
	}
	d.prim.setPrimed()
	return nil
}

// identity reads a primary's run ID and replication ID from its INFO.
func identity(info *redis.StringCmd) (string, error) {
	s, err := info.Result()
	if err != nil {
		return "", fmt.Errorf("INFO server replication: %w", err)
	}
	var runID, replID, role string
	for _, line := range strings.Split(s, "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok {
			continue
		}
		switch k {
		case "run_id":
			runID = v
		case "master_replid":
			replID = v
		case "role":
			role = v
		}
	}
	switch {
	case runID == "" || replID == "":
		return "", errors.New("INFO server replication: no run_id or master_replid")
	case role != "master":
		return "", fmt.Errorf("the server is a %s, not a primary", role)
	}
	return runID + "/" + replID, nil
}
