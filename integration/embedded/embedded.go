// Package embedded is the opt-in stand-in for integration.Kafka and
// integration.Redis: an in-process Kafka broker (franz-go's kfake) and an
// in-process Redis (miniredis), started per test.
//
//	brokers := integration.Kafka(t, integration.OrEmbedded(embedded.Servers{}))
//
// They are fakes. They run the real shardpipe code fast and without servers,
// but they do not behave as Kafka and Redis do in every corner (group
// protocol timing, Lua, persistence), so a test that passes on them proves
// your handler's logic, not the servers' behaviour. It lives apart from the
// integration package so that only tests that opt in link kfake and miniredis.
package embedded

import (
	"fmt"
	"testing"

	"github.com/alicebob/miniredis/v2"
	"github.com/twmb/franz-go/pkg/kfake"
)

// Servers starts a fresh kfake cluster or miniredis for each call; each is
// stopped when the test ends. The zero value is ready to use.
type Servers struct{}

// Kafka starts a one-broker kfake cluster on a loopback port.
func (Servers) Kafka(t testing.TB) ([]string, error) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1))
	if err != nil {
		return nil, fmt.Errorf("embedded: start kfake: %w", err)
	}
	t.Cleanup(c.Close)
	return c.ListenAddrs(), nil
}

// Redis starts a miniredis on a loopback port.
func (Servers) Redis(t testing.TB) (string, error) {
	mr := miniredis.NewMiniRedis()
	if err := mr.Start(); err != nil {
		return "", fmt.Errorf("embedded: start miniredis: %w", err)
	}
	t.Cleanup(mr.Close)
	return mr.Addr(), nil
}
