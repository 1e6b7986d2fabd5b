package chaoscheck

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/redis/go-redis/v9"
)

// Claim is the part of a ledger value the checker reads: the record that
// claimed the order (JSON fields topic, partition, offset, state).
type Claim struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	Offset    int64  `json:"offset"`
	State     string `json:"state"`
}

// Ledger is what Redis holds for a run.
type Ledger struct {
	Claims map[string]Claim  // order ID (key without the prefix) -> claim
	Bad    map[string]string // order ID -> undecodable value
	Totals map[string]int64  // customer -> sum
}

// ReadLedger reads every key under prefix (SCAN, then GET in pipelines)
// and the totals hash (none when totals is empty).
func ReadLedger(ctx context.Context, rdb redis.UniversalClient, prefix, totals string) (*Ledger, error) {
	l := &Ledger{Claims: map[string]Claim{}, Bad: map[string]string{}, Totals: map[string]int64{}}
	keys, err := scanAll(ctx, rdb, escapeGlob(prefix)+"*")
	if err != nil {
		return nil, fmt.Errorf("scan %s*: %w", prefix, err)
	}
	for len(keys) > 0 {
		n := min(len(keys), 1000)
		chunk := keys[:n]
		keys = keys[n:]
		cmds := make([]*redis.StringCmd, len(chunk))
		if _, err := rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			for i, k := range chunk {
				cmds[i] = p.Get(ctx, k)
			}
			return nil
		}); err != nil {
			return nil, fmt.Errorf("get ledger values: %w", err)
		}
		for i, k := range chunk {
			id := strings.TrimPrefix(k, prefix)
			var c Claim
			if err := json.Unmarshal([]byte(cmds[i].Val()), &c); err != nil || c.State == "" {
				l.Bad[id] = cmds[i].Val()
				continue
			}
			l.Claims[id] = c
		}
	}
	if totals == "" {
		return l, nil
	}
	h, err := rdb.HGetAll(ctx, totals).Result()
	if err != nil {
		return nil, fmt.Errorf("hgetall %s: %w", totals, err)
	}
	for cust, s := range h {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("totals %s field %q = %q: not an integer", totals, cust, s)
		}
		l.Totals[cust] = n
	}
	return l, nil
}

// scanAll returns every key matching match: on a Redis Cluster from every
// master (a SCAN walks one node's keys), the cluster's view reloaded first.
func scanAll(ctx context.Context, rdb redis.UniversalClient, match string) ([]string, error) {
	scan := func(ctx context.Context, c redis.Cmdable) ([]string, error) {
		var keys []string
		it := c.Scan(ctx, 0, match, 2000).Iterator()
		for it.Next(ctx) {
			keys = append(keys, it.Val())
		}
		return keys, it.Err()
	}
	cc, ok := rdb.(*redis.ClusterClient)
	if !ok {
		return scan(ctx, rdb)
	}
	cc.ReloadState(ctx)
	var mu sync.Mutex
	var all []string
	err := cc.ForEachMaster(ctx, func(ctx context.Context, n *redis.Client) error {
		keys, err := scan(ctx, n)
		mu.Lock()
		all = append(all, keys...)
		mu.Unlock()
		return err
	})
	return all, err
}

// escapeGlob escapes the SCAN MATCH metacharacters of s.
func escapeGlob(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`*?[]\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// checkLedger compares the ledger with the topic: each unique order once,
// nothing else, claims naming records that hold their order, in state
// want when it is not empty (guard mode: done).
func checkLedger(t *Topic, l *Ledger, want string, v *verdict) {
	for id, raw := range l.Bad {
		v.fail("ledger key %q holds %.80q, not a claim", id, raw)
	}
	for id, c := range l.Claims {
		if _, ok := t.Orders[id]; !ok {
			if isPoisonKey(t, id) {
				// A DLQ may remember what it dead-lettered in the ledger;
				// only an applied or done claim says the poison's effect ran.
				if c.State == "applied" || c.State == "done" {
					v.fail("ledger key %q belongs to a poison record: it was applied", id)
				}
			} else {
				v.fail("ledger key %q: no such order in topic %s", id, t.Name)
			}
			continue
		}
		at := Pos{c.Partition, c.Offset}
		if c.Topic != t.Name || t.Keys[at] != id {
			v.fail("ledger key %q: claim names %s %s, which does not hold that order", id, c.Topic, at)
		}
		if want != "" && c.State != want {
			v.fail("ledger key %q: claim is %q, want %q", id, c.State, want)
		}
	}
	for id, o := range t.Orders {
		if _, ok := l.Claims[id]; !ok {
			if _, bad := l.Bad[id]; !bad {
				v.lost++
				v.fail("order %q (first at %s) has no ledger key", id, o.At)
			}
		}
	}
}

func isPoisonKey(t *Topic, id string) bool {
	for _, p := range t.Poison {
		if string(p.Key) == id {
			return true
		}
	}
	return false
}
