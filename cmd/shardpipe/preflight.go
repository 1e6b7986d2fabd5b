package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/shardpipe/shardpipe/admin"
)

// adminClient returns a Kafka client for admin requests whose dials and
// retries end within the context's deadline.
// opts are the TLS and SASL options (kafkaSecurity).
func adminClient(brokers []string, opts ...kgo.Opt) (*kgo.Client, error) {
	cl, err := kgo.NewClient(append(opts, kgo.SeedBrokers(brokers...), kgo.DialTimeout(3*time.Second),
		kgo.RetryTimeout(5*time.Second))...)
	if err != nil {
		return nil, fmt.Errorf("kafka client for %s: %w", strings.Join(brokers, ","), err)
	}
	return cl, nil
}

// withAdmin runs fn with a kadm client on brokers; a client that cannot be
// made counts as an unreachable broker.
func withAdmin(brokers []string, kopts []kgo.Opt, fn func(*kadm.Client) error) error {
	cl, err := adminClient(brokers, kopts...)
	if err != nil {
		return &admin.UnreachableError{Server: "kafka", Request: "Metadata", Err: err}
	}
	defer cl.Close()
	return fn(kadm.NewClient(cl))
}

// preflight checks, concurrently and within timeout, that the brokers
// answer and every topic exists (admin.CheckTopics), and that Redis answers
// and can run the ledger (admin.CheckRedis). It returns an unavailable
// error with one line per problem, or a usage error when only the settings
// are wrong for the server (a cluster node given as one node).
func preflight(ctx context.Context, brokers []string, kopts []kgo.Opt, topics []string, rdb redis.UniversalClient, redisDesc string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var (
		wg         sync.WaitGroup
		kErr, rErr error
	)
	wg.Go(func() {
		kErr = withAdmin(brokers, kopts, func(adm *kadm.Client) error { return admin.CheckTopics(ctx, adm, topics...) })
	})
	if rdb != nil {
		wg.Go(func() { rErr = admin.CheckRedis(ctx, rdb, redisDesc) })
	}
	wg.Wait()
	var lines []string
	for _, e := range leaves(kErr) {
		lines = append(lines, problemLine(e, brokers, timeout))
	}
	rExit := exitFor(rErr, brokers, timeout)
	if len(lines) == 0 {
		return rExit
	}
	var ee *exitError
	if errors.As(rExit, &ee) {
		lines = append(lines, ee.lines...)
	}
	return unavailableErr(lines...)
}
