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
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// adminClient returns a Kafka client for admin requests whose dials and
// retries end within the context's deadline.
func adminClient(brokers []string) (*kgo.Client, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.DialTimeout(3*time.Second),
		kgo.RetryTimeout(5*time.Second))
	if err != nil {
		return nil, fmt.Errorf("kafka client for %s: %w", strings.Join(brokers, ","), err)
	}
	return cl, nil
}

// preflight checks, concurrently and within timeout, that the brokers
// answer, that every topic exists and that Redis answers PING. It returns an
// unavailable error with one line per problem.
func preflight(ctx context.Context, brokers, topics []string, rdb redis.UniversalClient, redisDesc string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var (
		wg   sync.WaitGroup
		kErr []string
		rErr string
	)
	wg.Go(func() { kErr = checkTopics(ctx, brokers, topics, timeout) })
	if rdb != nil {
		wg.Go(func() {
			switch err := rdb.Ping(ctx).Err(); {
			case errors.Is(err, context.DeadlineExceeded):
				rErr = fmt.Sprintf("redis %s: no answer to PING within %v", redisDesc, timeout)
			case err != nil:
				rErr = fmt.Sprintf("redis %s: PING failed: %v", redisDesc, err)
			}
		})
	}
	wg.Wait()
	lines := kErr
	if rErr != "" {
		lines = append(lines, rErr)
	}
	if len(lines) > 0 {
		return unavailableErr(lines...)
	}
	return nil
}

// checkTopics returns a line when no broker answers, and one per missing
// topic.
func checkTopics(ctx context.Context, brokers, topics []string, timeout time.Duration) []string {
	_, missing, err := topicPartitions(ctx, brokers, topics)
	if err != nil {
		return []string{brokerProblem(brokers, timeout, err)}
	}
	var lines []string
	for _, t := range missing {
		lines = append(lines, fmt.Sprintf("kafka: topic %q does not exist (create it, or let 'shardpipe produce --partitions N' create it)", t))
	}
	return lines
}

// brokerProblem words a failure to reach the brokers.
func brokerProblem(brokers []string, timeout time.Duration, err error) string {
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Sprintf("kafka %s: no broker answered within %v", strings.Join(brokers, ","), timeout)
	}
	return fmt.Sprintf("kafka %s: cannot reach a broker: %v", strings.Join(brokers, ","), err)
}

// topicPartitions returns the partition count of each existing topic and
// the names of the missing ones. err is set when no broker answers.
func topicPartitions(ctx context.Context, brokers, topics []string) (map[string]int, []string, error) {
	cl, err := adminClient(brokers)
	if err != nil {
		return nil, nil, err
	}
	defer cl.Close()
	md, err := kadm.NewClient(cl).Metadata(ctx, topics...)
	if err != nil {
		return nil, nil, err
	}
	found := make(map[string]int)
	var missing []string
	for _, t := range topics {
		td, ok := md.Topics[t]
		switch {
		case !ok || errors.Is(td.Err, kerr.UnknownTopicOrPartition):
			missing = append(missing, t)
		case td.Err != nil:
			return nil, nil, fmt.Errorf("topic %q: %w", t, td.Err)
		default:
			found[t] = len(td.Partitions)
		}
	}
	return found, missing, nil
}
