package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/shardpipe/shardpipe/admin"
)

// adminClient returns a Kafka client for admin requests whose dials and
// retries end within the context's deadline.
func (k kafkaConn) adminClient() (*kgo.Client, error) {
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(k.brokers...), clientIDOpt(), kgo.DialTimeout(3 * time.Second),
		kgo.RetryTimeout(5 * time.Second)}, k.opts...)...)
	if err != nil {
		return nil, fmt.Errorf("kafka client for %s: %w", strings.Join(k.brokers, ","), err)
	}
	return cl, nil
}

// withAdmin runs fn with a kadm client; a client that cannot be made
// counts as an unreachable broker.
func (k kafkaConn) withAdmin(fn func(*kadm.Client) error) error {
	cl, err := k.adminClient()
	if err != nil {
		return &admin.UnreachableError{Server: "kafka", Request: "Metadata", Err: err}
	}
	defer cl.Close()
	return fn(kadm.NewClient(cl))
}

// preflight checks within timeout that the brokers answer, every topic
// exists and Redis can run the ledger (admin.Preflight); a Redis that does
// not answer at once is waited for, which is logged to log at the first
// refused attempt. It returns an unavailable error with one line per
// problem, or a usage error when only the settings are wrong for the
// server (a cluster node given as one node).
func preflight(ctx context.Context, k kafkaConn, topics []string, rdb redis.UniversalClient, redisDesc string, timeout time.Duration,
	log *slog.Logger) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	wait := admin.OnWait(func(err error) {
		log.Warn(fmt.Sprintf("waiting for Redis at %s up to %v: %v", redisDesc, timeout, err))
	})
	var kErr, rErr error
	if err := k.withAdmin(func(adm *kadm.Client) error {
		kErr, rErr = admin.Preflight(ctx, adm, topics, rdb, redisDesc, wait)
		return nil
	}); err != nil {
		kErr = err
	}
	var lines []string
	for _, e := range admin.Problems(kErr) {
		lines = append(lines, problemLine(e, k, timeout))
	}
	rExit := exitFor(rErr, k, timeout)
	if len(lines) == 0 {
		return rExit
	}
	var ee *exitError
	if errors.As(rExit, &ee) {
		lines = append(lines, ee.lines...)
	}
	return unavailableErr(lines...)
}
