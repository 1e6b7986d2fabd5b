// Package embedded runs an in-process Kafka broker (kfake) and an in-process
// Redis (miniredis) so that `shardpipe demo` needs no servers. They are fakes:
// good for showing the protocol, not for claims about the real servers.
package embedded

import (
	"fmt"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"github.com/twmb/franz-go/pkg/kfake"
)

// Servers is a running kfake broker and miniredis.
type Servers struct {
	kafka *kfake.Cluster
	mr    *miniredis.Miniredis
	rdb   *redis.Client
}

// Start starts one in-process broker and one in-process Redis, both on
// 127.0.0.1 ports chosen by the system.
func Start() (*Servers, error) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1))
	if err != nil {
		return nil, fmt.Errorf("embedded: start kfake broker: %w", err)
	}
	mr := miniredis.NewMiniRedis()
	if err := mr.Start(); err != nil {
		c.Close()
		return nil, fmt.Errorf("embedded: start miniredis: %w", err)
	}
	return &Servers{kafka: c, mr: mr, rdb: redis.NewClient(&redis.Options{Addr: mr.Addr()})}, nil
}

// Brokers returns the broker's host:port.
func (s *Servers) Brokers() []string { return s.kafka.ListenAddrs() }

// RedisAddr returns miniredis's host:port.
func (s *Servers) RedisAddr() string { return s.mr.Addr() }

// Redis returns a client of the in-process Redis, closed by Close.
func (s *Servers) Redis() *redis.Client { return s.rdb }

// Close stops both servers.
func (s *Servers) Close() {
	_ = s.rdb.Close()
	s.mr.Close()
	s.kafka.Close()
}
