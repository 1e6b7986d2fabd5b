package metrics

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"
)

// RedisPool is a prometheus.Collector over a go-redis client's connection
// pool statistics (PoolStats), read once per scrape.
type RedisPool struct {
	rdb   redis.UniversalClient
	descs [6]*prometheus.Desc
}

// NewRedisPool returns a RedisPool exporting
//
//	shardpipe_redis_pool_hits_total          counter  a free connection was found in the pool
//	shardpipe_redis_pool_misses_total        counter  no free connection: one was dialled
//	shardpipe_redis_pool_timeouts_total      counter  waits for a connection that timed out
//	shardpipe_redis_pool_stale_conns_total   counter  stale connections removed from the pool
//	shardpipe_redis_pool_conns               gauge    connections in the pool
//	shardpipe_redis_pool_idle_conns          gauge    idle connections in the pool
//
// For a cluster client the figures are summed over its nodes' pools.
func NewRedisPool(rdb redis.UniversalClient, opts ...Opt) *RedisPool {
	var cfg collectorConfig
	for _, o := range opts {
		o.apply(&cfg)
	}
	d := func(name, help string) *prometheus.Desc { return prometheus.NewDesc(name, help, nil, cfg.labels) }
	return &RedisPool{rdb: rdb, descs: [6]*prometheus.Desc{
		d("shardpipe_redis_pool_hits_total", "Times a free connection was found in the Redis pool."),
		d("shardpipe_redis_pool_misses_total", "Times no free connection was found in the Redis pool."),
		d("shardpipe_redis_pool_timeouts_total", "Waits for a Redis pool connection that timed out."),
		d("shardpipe_redis_pool_stale_conns_total", "Stale connections removed from the Redis pool."),
		d("shardpipe_redis_pool_conns", "Connections in the Redis pool."),
		d("shardpipe_redis_pool_idle_conns", "Idle connections in the Redis pool."),
	}}
}

// Describe implements prometheus.Collector.
func (r *RedisPool) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range r.descs {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (r *RedisPool) Collect(ch chan<- prometheus.Metric) {
	s := r.rdb.PoolStats()
	if s == nil {
		return
	}
	vals := [6]float64{float64(s.Hits), float64(s.Misses), float64(s.Timeouts), float64(s.StaleConns),
		float64(s.TotalConns), float64(s.IdleConns)}
	for i, d := range r.descs {
		typ := prometheus.CounterValue
		if i >= 4 {
			typ = prometheus.GaugeValue
		}
		ch <- prometheus.MustNewConstMetric(d, typ, vals[i])
	}
}
