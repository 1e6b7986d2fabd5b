package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/redis/go-redis/v9"
)

// Redis is a Store in Redis, for runs outside a consumer group (replays, or a
// single process that owns all partitions). Each partition is one hash with
// fields "epoch" and "offset"; Commit applies the commit rules and writes in
// one Lua script, so concurrent committers cannot interleave between the check
// and the write. Acquire starts a new term (epoch+1) the same way, fencing
// every older holder.
//
// It works over any redis.UniversalClient (single, Sentinel, Cluster): each
// script touches one key. Each call is one round trip.
type Redis struct {
	c       redis.UniversalClient
	prefix  string
	commit  *redis.Script
	acquire *redis.Script
}

// DefaultRedisPrefix is the key prefix NewRedis uses unless told otherwise.
const DefaultRedisPrefix = "shardpipe:checkpoint:"

// NewRedis returns a Redis store over c. Its keys start with
// DefaultRedisPrefix unless Prefix says otherwise. It does no I/O.
func NewRedis(c redis.UniversalClient, opts ...RedisOpt) *Redis {
	r := &Redis{c: c, prefix: DefaultRedisPrefix, commit: redis.NewScript(commitLua), acquire: redis.NewScript(acquireLua)}
	for _, o := range opts {
		if o != nil {
			o.applyRedis(r)
		}
	}
	return r
}

func (r *Redis) key(p Partition) string {
	return r.prefix + p.Topic + ":" + strconv.FormatInt(int64(p.Partition), 10)
}

// commitScript mirrors Decide. It returns {verdict, epoch, offset} with the
// position that stands after the call.
const commitLua = `
local e = tonumber(redis.call('HGET', KEYS[1], 'epoch') or '0')
local o = tonumber(redis.call('HGET', KEYS[1], 'offset') or '0')
local ne, no = tonumber(ARGV[1]), tonumber(ARGV[2])
if ne < e then return {3, e, o} end
if ne == e and no < o then return {4, e, o} end
if ne == e and no == o then return {2, e, o} end
redis.call('HSET', KEYS[1], 'epoch', ARGV[1], 'offset', ARGV[2])
return {1, ne, no}
`

const acquireLua = `
local e = redis.call('HINCRBY', KEYS[1], 'epoch', 1)
local o = tonumber(redis.call('HGET', KEYS[1], 'offset') or '0')
if o == 0 then redis.call('HSET', KEYS[1], 'offset', 0) end
return {e, o}
`

// Commit moves p to offset under epoch if the commit rules allow it.
func (r *Redis) Commit(ctx context.Context, p Partition, epoch, offset int64) error {
	res, err := r.commit.Run(ctx, r.c, []string{r.key(p)}, epoch, offset).Int64Slice()
	if err != nil {
		return &CommitError{Partition: p, Epoch: epoch, Offset: offset, Current: Position{Epoch: -1, Offset: -1},
			Err: fmt.Errorf("redis checkpoint: %w", err)}
	}
	if len(res) != 3 {
		return fmt.Errorf("commit %s: redis checkpoint script returned %d values, want 3", p, len(res))
	}
	cur := Position{Epoch: res[1], Offset: res[2]}
	var sentinel error
	switch Verdict(res[0]) {
	case Advance, Same:
		return nil
	case StaleEpoch:
		sentinel = ErrStaleEpoch
	case StaleOffset:
		sentinel = ErrStaleOffset
	default:
		return fmt.Errorf("commit %s: redis checkpoint script returned verdict %d", p, res[0])
	}
	return &CommitError{Partition: p, Epoch: epoch, Offset: offset, Current: cur, Err: sentinel}
}

// Load returns p's position; the zero Position when none was stored.
func (r *Redis) Load(ctx context.Context, p Partition) (Position, error) {
	vals, err := r.c.HMGet(ctx, r.key(p), "epoch", "offset").Result()
	if err != nil {
		return Position{}, fmt.Errorf("load %s: redis checkpoint: %w", p, err)
	}
	var pos Position
	for i, dst := range []*int64{&pos.Epoch, &pos.Offset} {
		s, ok := vals[i].(string)
		if !ok {
			continue
		}
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return Position{}, fmt.Errorf("load %s: redis checkpoint field %d holds %q: %w", p, i, s, err)
		}
		*dst = n
	}
	return pos, nil
}

// Acquire starts a new term on p and returns it: the epoch is one past the
// stored one, so every holder of an older epoch is refused from now on with
// ErrStaleEpoch. The offset is the committed one to resume from.
func (r *Redis) Acquire(ctx context.Context, p Partition) (Position, error) {
	res, err := r.acquire.Run(ctx, r.c, []string{r.key(p)}).Int64Slice()
	if err != nil {
		return Position{}, fmt.Errorf("acquire %s: redis checkpoint: %w", p, err)
	}
	if len(res) != 2 {
		return Position{}, errors.New("acquire " + p.String() + ": redis checkpoint script returned a malformed reply")
	}
	return Position{Epoch: res[0], Offset: res[1]}, nil
}
