package bench

import (
	"context"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// settle waits until Redis is as a round found it before the first: what
// UNLINK handed to its background thread freed (up to a minute), so that
// the next mode does not share the CPU with it, then its keyspace's table
// shrunk to the keys left (shrunk).
func settle(ctx context.Context, rdb *redis.Client) error {
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		mem, err := rdb.Info(ctx, "memory").Result()
		if v := infoField(mem, "lazyfree_pending_objects"); err != nil || v == "" || v == "0" {
			break // done, or an ACL without INFO: nothing to wait for
		}
		if err := pause(ctx); err != nil {
			return err
		}
	}
	return shrunk(ctx, rdb)
}

// shrunk waits (up to 5 s) until Redis has resized its keyspace's table to
// the keys it holds (MEMORY STATS: the tables' overhead no more than
// tableBound of keys.count). After a round's million keys are deleted,
// Redis shrinks the table in its cron, within about 1/hz s; a mode started
// before then inserts its keys into the last round's table and skips the
// rehashing of a growing table that the other modes pay, about a tenth of
// Redis's time per key ((k) right after (b) did, and (d) after (c) did
// not: BENCHMARKS.md, "Three full runs with Redis's own time, and a
// ceiling measured on a table already grown").
// Without MEMORY STATS (an ACL, another server) it does not wait.
func shrunk(ctx context.Context, rdb *redis.Client) error {
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		stats, err := rdb.Do(ctx, "MEMORY", "STATS").Result()
		if err != nil {
			return nil
		}
		overhead, keys, ok := tableOverhead(stats)
		switch {
		case !ok && keys == 0:
			// No database holds a key, so none is listed: give the cron
			// the few of its runs an empty table's shrinking takes.
			return sleepCtx(ctx, emptyShrink)
		case !ok || overhead <= tableBound(keys):
			return nil
		}
		if err := pause(ctx); err != nil {
			return err
		}
	}
	return nil
}

// emptyShrink is how long shrunk gives Redis to shrink a table left
// empty: five runs of its cron at the default hz 10.
const emptyShrink = 500 * time.Millisecond

// tableBound is the most a shrunk keyspace of keys keys takes in table
// overhead: a 24-byte entry per key and a slot pointer per slot, Redis
// keeping at least a tenth of the slots in use, plus 1 MiB for the rest.
func tableBound(keys int64) int64 { return 104*keys + 1<<20 }

// tableOverhead reads a MEMORY STATS reply (a RESP3 map or a RESP2 array
// of names and values): the main tables' overhead summed over its
// databases (db.N: overhead.hashtable.main) and keys.count. ok is false
// when either is absent (no db.N is listed while no database holds a key;
// keys is then 0).
func tableOverhead(stats any) (overhead, keys int64, ok bool) {
	var haveOverhead, haveKeys bool
	for name, v := range fields(stats) {
		switch {
		case name == "keys.count":
			keys, haveKeys = asInt(v)
		case strings.HasPrefix(name, "db."):
			for n, x := range fields(v) {
				if o, isInt := asInt(x); n == "overhead.hashtable.main" && isInt {
					overhead, haveOverhead = overhead+o, true
				}
			}
		}
	}
	return overhead, keys, haveOverhead && haveKeys
}

// fields are the names and values of a reply that is a map (RESP3) or an
// array of names and values (RESP2); none for anything else.
func fields(reply any) map[string]any {
	out := map[string]any{}
	switch r := reply.(type) {
	case map[any]any:
		for k, v := range r {
			if name, ok := k.(string); ok {
				out[name] = v
			}
		}
	case []any:
		for i := 0; i+1 < len(r); i += 2 {
			if name, ok := r[i].(string); ok {
				out[name] = r[i+1]
			}
		}
	}
	return out
}

// asInt is v as an integer reply.
func asInt(v any) (int64, bool) {
	n, ok := v.(int64)
	return n, ok
}

// pause waits the 50 ms between two polls of settle and shrunk.
func pause(ctx context.Context) error { return sleepCtx(ctx, 50*time.Millisecond) }

// sleepCtx waits d or until ctx ends.
func sleepCtx(ctx context.Context, d time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}
