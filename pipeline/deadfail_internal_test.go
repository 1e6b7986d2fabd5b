package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/twmb/franz-go/pkg/kerr"
)

// redisReply is a Redis error reply as go-redis returns it.
type redisReply string

func (e redisReply) Error() string { return string(e) }
func (redisReply) RedisError()     {}

var _ redis.Error = redisReply("")

// TestJudgeDLQ: dead-letter errors no retry can fix stop the pipeline; an
// unknown topic is retried for a grace; outages and waits are retried.
func TestJudgeDLQ(t *testing.T) {
	wrap := func(err error) error { return fmt.Errorf("dead-letter orders/0@4 to orders.dlq/0: %w", err) }
	for _, tc := range []struct {
		err  error
		want dlqVerdict
	}{
		{wrap(fmt.Errorf("%w (uncompressed_bytes=9000)", kerr.MessageTooLarge)), dlqStop},
		{wrap(kerr.RecordListTooLarge), dlqStop},
		// Too large, then its placeholder failed: the placeholder's error decides.
		{fmt.Errorf("%v; its placeholder to orders.dlq/0: %w", wrap(kerr.MessageTooLarge), kerr.NotLeaderForPartition), dlqRetry},
		{fmt.Errorf("%v; its placeholder to orders.dlq/0: %w", wrap(kerr.MessageTooLarge), kerr.MessageTooLarge), dlqStop},
		{wrap(kerr.InvalidRecord), dlqStop},
		{wrap(kerr.TopicAuthorizationFailed), dlqStop},
		{wrap(kerr.ClusterAuthorizationFailed), dlqStop},
		{fmt.Errorf("marker t:dlq:orders:0:4: %w", errBadMarker), dlqStop},
		{fmt.Errorf("marker: %w", redisReply("WRONGTYPE Operation against a key holding the wrong kind of value")), dlqStop},
		{fmt.Errorf("marker: %w", redisReply("NOPERM this user has no permissions to run the 'set' command")), dlqStop},
		{fmt.Errorf("dead-letter topic orders.dlq: %w", errNoTopic), dlqMissing},
		{wrap(kerr.UnknownTopicOrPartition), dlqMissing},
		{wrap(kerr.NotLeaderForPartition), dlqRetry},
		{wrap(context.DeadlineExceeded), dlqRetry},
		{fmt.Errorf("marker: %w", io.EOF), dlqRetry},
		{fmt.Errorf("marker: %w", redisReply("LOADING Redis is loading the dataset in memory")), dlqRetry},
		{fmt.Errorf("marker: %w", redis.Nil), dlqRetry},
	} {
		if got := judgeDLQ(tc.err); got != tc.want {
			t.Errorf("judgeDLQ(%v) = %d, want %d", tc.err, got, tc.want)
		}
	}
}

// TestDLQGiveUp: a topic missing for a whole grace stops; any other retried
// error in between starts the grace again.
func TestDLQGiveUp(t *testing.T) {
	missing, down := errNoTopic, errors.New("connection refused")
	t0 := time.Unix(1000, 0)
	g := dlqGiveUp{grace: time.Second}
	for i, step := range []struct {
		err  error
		at   time.Duration
		stop bool
	}{
		{missing, 0, false},
		{missing, 900 * time.Millisecond, false},
		{down, 950 * time.Millisecond, false},
		{missing, 1100 * time.Millisecond, false}, // the grace starts again
		{missing, 2 * time.Second, false},
		{missing, 2100 * time.Millisecond, true},
		{kerr.MessageTooLarge, 2200 * time.Millisecond, true},
	} {
		if got := g.stop(step.err, t0.Add(step.at)); got != step.stop {
			t.Fatalf("step %d (%v at %v): stop = %v, want %v", i, step.err, step.at, got, step.stop)
		}
	}
}
