package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// Marker states.
const (
	markPending = "pending"
	markDone    = "done"
)

// mark is the Redis value of a dead-letter marker: who claimed the write
// (Owner names a term: member and epoch), when, and until when the claim
// holds while pending.
type mark struct {
	State string    `json:"state"`
	Owner string    `json:"owner"`
	At    time.Time `json:"at"`
	Until time.Time `json:"until"`
}

func (m mark) encode() string {
	b, err := json.Marshal(m)
	if err != nil { // only a year outside [0,9999] can fail
		panic(fmt.Sprintf("pipeline: encode marker: %v", err))
	}
	return string(b)
}

func decodeMark(s string) (mark, error) {
	var m mark
	if err := json.Unmarshal([]byte(s), &m); err != nil || (m.State != markPending && m.State != markDone) {
		return mark{}, fmt.Errorf("%w: %.80q (%v)", errBadMarker, s, err)
	}
	return m, nil
}

// marks reads and writes dead-letter markers; each marker lives for ttl.
type marks struct {
	c   redis.UniversalClient
	ttl time.Duration
	cas *redis.Script
}

func newMarks(c redis.UniversalClient, ttl time.Duration) marks {
	return marks{c: c, ttl: ttl, cas: redis.NewScript(`if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
return 1`)}
}

// claim sets key to m unless it exists (SET NX GET, one round trip). It
// returns the marker already there and its raw value when it did not.
func (k marks) claim(ctx context.Context, key string, m mark) (prior mark, raw string, claimed bool, err error) {
	raw, err = k.c.SetArgs(ctx, key, m.encode(), redis.SetArgs{Mode: "NX", TTL: k.ttl, Get: true}).Result()
	if errors.Is(err, redis.Nil) {
		return mark{}, "", true, nil
	}
	if err != nil {
		return mark{}, "", false, fmt.Errorf("dead-letter marker %s: %w", key, err)
	}
	if prior, err = decodeMark(raw); err != nil {
		return mark{}, "", false, fmt.Errorf("dead-letter marker %s: %w", key, err)
	}
	return prior, raw, false, nil
}

// swap replaces key's value with m if it is still old (compare and set).
func (k marks) swap(ctx context.Context, key, old string, m mark) (bool, error) {
	v, err := k.cas.Run(ctx, k.c, []string{key}, old, m.encode(), k.ttl.Milliseconds()).Int64()
	if err != nil {
		return false, fmt.Errorf("dead-letter marker %s: %w", key, err)
	}
	return v == 1, nil
}
