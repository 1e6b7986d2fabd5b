package bench

import (
	"context"
	"fmt"
	"strings"

	"github.com/redis/go-redis/v9"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Clean deletes the keys a round wrote under prefix: prefix+Key(i) for i
// below n, the totals hash and the latency warm-up key (UNLINK, pipelined),
// or, with n < 0, whatever SCAN finds under prefix; so that a run holds at
// most a round's keys at a time. It then waits until Redis has freed them.
func Clean(ctx context.Context, redisSpec, prefix string, n int) error {
	rdb, err := NewRedis(redisSpec)
	if err != nil {
		return err
	}
	defer rdb.Close()
	if n < 0 {
		if err := scanUnlink(ctx, rdb, prefix); err != nil {
			return err
		}
		return settle(ctx, rdb)
	}
	const perCmd, perPipe = 1000, 100
	p := rdb.Pipeline()
	keys := []string{prefix + "totals", prefix + "warm-up"}
	flush := func() error {
		if len(keys) > 0 {
			p.Unlink(ctx, keys...)
			keys = nil
		}
		if p.Len() < perPipe {
			return nil
		}
		_, err := p.Exec(ctx)
		return err
	}
	for i := range n {
		keys = append(keys, prefix+Key(i))
		if len(keys) == perCmd {
			if err := flush(); err != nil {
				return fmt.Errorf("bench: unlink %s*: %w", prefix, err)
			}
		}
	}
	if err := flush(); err != nil {
		return fmt.Errorf("bench: unlink %s*: %w", prefix, err)
	}
	if _, err := p.Exec(ctx); err != nil {
		return fmt.Errorf("bench: unlink %s*: %w", prefix, err)
	}
	return settle(ctx, rdb)
}

// scanUnlink deletes every key under prefix, found by SCAN.
func scanUnlink(ctx context.Context, rdb *redis.Client, prefix string) error {
	iter := rdb.Scan(ctx, 0, prefix+"*", 10_000).Iterator()
	var batch []string
	for iter.Next(ctx) {
		batch = append(batch, iter.Val())
		if len(batch) == 1000 {
			if err := rdb.Unlink(ctx, batch...).Err(); err != nil {
				return fmt.Errorf("bench: unlink %s*: %w", prefix, err)
			}
			batch = batch[:0]
		}
	}
	if err := iter.Err(); err != nil {
		return fmt.Errorf("bench: scan %s*: %w", prefix, err)
	}
	if len(batch) > 0 {
		if err := rdb.Unlink(ctx, batch...).Err(); err != nil {
			return fmt.Errorf("bench: unlink %s*: %w", prefix, err)
		}
	}
	return nil
}

// infoField returns the value of name in an INFO reply, "" when absent.
func infoField(info, name string) string {
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), name+":"); ok {
			return v
		}
	}
	return ""
}

// DeleteTopic deletes topic; kafka are the client's options (as Prefill's).
func DeleteTopic(ctx context.Context, kafka []kgo.Opt, topic string) error {
	cl, err := kgo.NewClient(kafka...)
	if err != nil {
		return err
	}
	defer cl.Close()
	_, err = kadm.NewClient(cl).DeleteTopic(ctx, topic)
	return err
}
