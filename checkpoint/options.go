package checkpoint

// RedisOpt is an option of NewRedis.
type RedisOpt interface {
	applyRedis(*Redis)
}

type redisOpt func(*Redis)

func (o redisOpt) applyRedis(r *Redis) { o(r) }

// Prefix starts every key of a Redis store: a partition's position is the
// hash prefix + topic + ":" + partition. Default (and for an empty prefix)
// DefaultRedisPrefix. Stores with different prefixes keep separate
// positions of the same partitions.
func Prefix(prefix string) RedisOpt {
	return redisOpt(func(r *Redis) {
		if prefix != "" {
			r.prefix = prefix
		}
	})
}
