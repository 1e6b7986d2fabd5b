package pipeline_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/shardpipe/shardpipe/pipeline"
	"github.com/shardpipe/shardpipe/sink"
)

type noEffects struct{}

func (noEffects) Apply(_ context.Context, b []sink.Record) ([]sink.Result, error) {
	return make([]sink.Result, len(b)), nil
}

// TestOptionScopes lists which constructor accepts which option. The
// scoping is by type (GroupOpt for New, ReplayOpt for NewReplay, Opt for
// both), so a group-only option passed to NewReplay, or a replay-only one
// passed to New, does not compile (Go cannot test that a call does not
// compile; ExampleNewReplay shows it). Before the options were typed, a
// replay ignored Group, Topics and the others silently. This table keeps
// the scopes from changing by accident.
func TestOptionScopes(t *testing.T) {
	rdb := redis.NewClient(&redis.Options{Addr: miniredis.RunT(t).Addr()})
	t.Cleanup(func() { rdb.Close() })
	for _, tt := range []struct {
		name          string
		opt           any
		group, replay bool
	}{
		{"Brokers", pipeline.Brokers("b:9092"), true, true},
		{"Sink", pipeline.Sink(nil), true, true},
		{"CommitEvery", pipeline.CommitEvery(10), true, true},
		{"CommitInterval", pipeline.CommitInterval(time.Second), true, true},
		{"MaxUncommitted", pipeline.MaxUncommitted(100), true, true},
		{"MaxBatch", pipeline.MaxBatch(10), true, true},
		{"QueueRecords", pipeline.QueueRecords(40), true, true},
		{"QueueBytes", pipeline.QueueBytes(1 << 20), true, true},
		{"ShutdownTimeout", pipeline.ShutdownTimeout(time.Second), true, true},
		{"PoisonAttempts", pipeline.PoisonAttempts(2), true, true},
		{"DeadLetters", pipeline.DeadLetters(rdb, "dlq:"), true, true},
		{"Logger", pipeline.Logger(slog.Default()), true, true},
		{"Observe", pipeline.Observe(func(pipeline.Event) {}), true, true},
		{"KafkaOptions", pipeline.KafkaOptions(), true, true},
		{"BeforeCommit", pipeline.BeforeCommit(nil), true, true},
		{"Topics", pipeline.Topics("t"), true, false},
		{"Group", pipeline.Group("g"), true, false},
		{"GroupProtocol", pipeline.GroupProtocol(pipeline.Consumer), true, false},
		{"StartAtLatest", pipeline.StartAtLatest(), true, false},
		{"SessionTimeout", pipeline.SessionTimeout(time.Second), true, false},
		{"RevokeTimeout", pipeline.RevokeTimeout(time.Second), true, false},
		{"CheckpointPrefix", pipeline.CheckpointPrefix("r:"), false, true},
		{"PlanGiven", pipeline.PlanGiven("--from 0"), false, true},
	} {
		_, group := tt.opt.(pipeline.GroupOpt)
		_, replay := tt.opt.(pipeline.ReplayOpt)
		_, both := tt.opt.(pipeline.Opt)
		if group != tt.group || replay != tt.replay || both != (tt.group && tt.replay) {
			t.Errorf("%s: New takes it %v, NewReplay %v, Opt %v; want %v, %v, %v",
				tt.name, group, replay, both, tt.group, tt.replay, tt.group && tt.replay)
		}
	}
}

// TestDeadLetterOptions: the dead-letter settings keep their validation
// (they were the fields of a struct, now options of DeadLetters).
func TestDeadLetterOptions(t *testing.T) {
	rdb := redis.NewClient(&redis.Options{Addr: miniredis.RunT(t).Addr()})
	t.Cleanup(func() { rdb.Close() })
	base := []pipeline.GroupOpt{pipeline.Brokers("127.0.0.1:1"), pipeline.Topics("t"), pipeline.Group("g"),
		pipeline.Sink(noEffects{}), pipeline.Logger(slog.New(slog.DiscardHandler))}
	for _, tt := range []struct {
		name string
		dlq  pipeline.Opt
		want string // "" for accepted
	}{
		{"defaults", pipeline.DeadLetters(rdb, "dlq:"), ""},
		{"every setting", pipeline.DeadLetters(rdb, "dlq:", pipeline.DeadLetterTo("bad.orders"),
			pipeline.DeadLetterTTL(time.Hour), pipeline.DeadLetterLease(time.Second), pipeline.DeadLetterScanBound(time.Second)), ""},
		{"no redis", pipeline.DeadLetters(nil, "dlq:"), "no Redis client for the markers"},
		{"no prefix", pipeline.DeadLetters(rdb, ""), "empty marker prefix"},
		{"short ttl", pipeline.DeadLetters(rdb, "dlq:", pipeline.DeadLetterTTL(time.Microsecond)), "must be at least 1ms"},
		{"short lease", pipeline.DeadLetters(rdb, "dlq:", pipeline.DeadLetterLease(time.Microsecond)), "must be at least 1ms"},
		{"short scan bound", pipeline.DeadLetters(rdb, "dlq:", pipeline.DeadLetterScanBound(-time.Second)), "must be at least 1ms"},
	} {
		p, err := pipeline.New(append(base, tt.dlq)...)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s: %v", tt.name, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%s: err %v, want one naming %q", tt.name, err, tt.want)
		}
		if p != nil {
			p.Abort()
		}
	}
}
