package sink

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/redis/go-redis/v9"
)

// CommitMarks keeps in Redis, per consumer group and partition, the
// highest offset the group ever sent a commit at: one key per partition,
// <prefix>committed:<len(group)>:<group>:<topic>:<partition>, raised (never
// lowered) before each commit. A record below the mark was committed past
// by some owner of the group, which counted it; the group meets it again
// only after reset-offsets moved back, and must not count it twice
// (pipeline.CountOnce). One key per partition the group ever committed,
// without TTL; it costs one round trip per commit and one per term.
type CommitMarks struct {
	rdb    redis.UniversalClient
	prefix string
}

// NewCommitMarks returns the marks under prefix on rdb (any deployment:
// each operation touches one key).
func NewCommitMarks(rdb redis.UniversalClient, prefix string) *CommitMarks {
	return &CommitMarks{rdb: rdb, prefix: prefix}
}

// Key returns the mark's key of group's partition.
func (m *CommitMarks) Key(group, topic string, partition int32) string {
	return fmt.Sprintf("%scommitted:%d:%s:%s:%d", m.prefix, len(group), group, topic, partition)
}

// raiseScript sets KEYS[1] to ARGV[1] unless it holds a higher offset.
var raiseScript = redis.NewScript(`local cur = tonumber(redis.call('GET', KEYS[1]) or '-1')
if cur == nil or cur < tonumber(ARGV[1]) then redis.call('SET', KEYS[1], ARGV[1]) end
return 1`)

// Raise records that group sends a commit of partition at offset: the mark
// becomes offset unless it is higher already.
func (m *CommitMarks) Raise(ctx context.Context, group, topic string, partition int32, offset int64) error {
	key := m.Key(group, topic, partition)
	if err := raiseScript.Run(ctx, m.rdb, []string{key}, offset).Err(); err != nil {
		return fmt.Errorf("sink: raising commit mark %s to %d: %w", key, offset, err)
	}
	return nil
}

// Highest returns the mark of group's partition, -1 when it has none.
func (m *CommitMarks) Highest(ctx context.Context, group, topic string, partition int32) (int64, error) {
	key := m.Key(group, topic, partition)
	v, err := m.rdb.Get(ctx, key).Result()
	if errors.Is(err, redis.Nil) {
		return -1, nil
	}
	if err != nil {
		return 0, fmt.Errorf("sink: reading commit mark %s: %w", key, err)
	}
	off, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("sink: commit mark %s holds %q, not an offset: %w", key, v, ErrMisconfigured)
	}
	return off, nil
}
