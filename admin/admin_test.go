package admin_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/shardpipe/shardpipe/admin"
	"github.com/shardpipe/shardpipe/integration"
	"github.com/shardpipe/shardpipe/pipeline"
)

// TestChecksOnRealServers: the checks against the real broker and Redis,
// each with the sentinel a caller branches on.
func TestChecksOnRealServers(t *testing.T) {
	brokers, addr := integration.Kafka(t), integration.Redis(t)
	topic := integration.CreateTopic(t, brokers, 2)
	group := integration.Group(t)
	cl := integration.NewKafkaClient(t, brokers)
	adm := kadm.NewClient(cl)
	rdb := integration.NewRedisClient(t, addr)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tests := []struct {
		name string
		run  func() error
		want error // nil: no error
	}{
		{"redis answers and is 7.0+", func() error { return admin.CheckRedis(ctx, rdb, "") }, nil},
		{"topic exists", func() error { return admin.CheckTopics(ctx, adm, topic) }, nil},
		{"topic missing", func() error { return admin.CheckTopics(ctx, adm, topic, topic+"-missing") }, admin.ErrTopicMissing},
		{"dead-letter topic missing", func() error { return admin.CheckDeadLetterTopics(ctx, adm, "", []string{topic}) }, admin.ErrTopicMissing},
		{"group missing", func() error { _, err := admin.DescribeGroup(ctx, adm, group, topic); return err }, admin.ErrGroupMissing},
		{"no members in a group that does not exist", func() error { return admin.RequireNoMembers(ctx, adm, group) }, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.run()
			if tt.want == nil && err != nil || tt.want != nil && !errors.Is(err, tt.want) {
				t.Fatalf("%v, want %v", err, tt.want)
			}
			var ce *admin.CheckError
			if tt.want != nil && (!errors.As(err, &ce) || ce.Value == "" || ce.Fix == "") {
				t.Fatalf("%v: not a *CheckError naming the value and the fix", err)
			}
		})
	}
	d, err := admin.CheckDurability(ctx, rdb, admin.DurabilityConfig{FenceKey: integration.RedisPrefix(t, rdb) + "fence"})
	if err != nil || len(d.Nodes) != 1 || d.Nodes[0].Config == nil {
		t.Fatalf("durability of the test Redis (appendonly yes, noeviction): %+v, %v", d, err)
	}
}

// TestGroupActiveAndReset: a group with a member refuses a reset
// (ErrGroupActive); once it left, PlanReset and ResetOffsets move its
// offsets, and DescribeGroup shows them with lag to the last stable offset.
func TestGroupActiveAndReset(t *testing.T) {
	brokers := integration.Kafka(t)
	topic := integration.CreateTopic(t, brokers, 1)
	group := integration.Group(t)
	prod := integration.NewKafkaClient(t, brokers, kgo.DefaultProduceTopic(topic))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for i := range 10 {
		if err := prod.ProduceSync(ctx, &kgo.Record{Value: []byte{byte(i)}}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	adm := kadm.NewClient(prod)
	member := integration.NewKafkaClient(t, brokers, kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if fs := member.PollRecords(ctx, 10); fs.Err0() != nil {
		t.Fatal(fs.Err0())
	}
	if err := member.CommitUncommittedOffsets(ctx); err != nil {
		t.Fatal(err)
	}
	if err := admin.RequireNoMembers(ctx, adm, group); !errors.Is(err, admin.ErrGroupActive) {
		t.Fatalf("with a member: %v, want ErrGroupActive", err)
	}
	member.Close() // leaves the group
	moves, err := admin.PlanReset(ctx, adm, group, topic, admin.ToBound(pipeline.AtOffset(4)))
	if err != nil || len(moves) != 1 || moves[0].After != 4 || moves[0].Before <= 4 {
		t.Fatalf("plan: %+v, %v", moves, err)
	}
	if rg := admin.ReadAgain(moves); len(rg) != 1 || rg[0].From != 4 || rg[0].To != moves[0].Before {
		t.Fatalf("read again: %+v", rg)
	}
	if err := admin.ResetOffsets(ctx, adm, group, topic, moves); err != nil {
		t.Fatal(err)
	}
	st, err := admin.DescribeGroup(ctx, adm, group, topic)
	if err != nil || len(st.Partitions) != 1 || st.Partitions[0].Committed != 4 || st.Lag != 6 || st.Partitions[0].LastStable != 10 {
		t.Fatalf("status after the reset: %+v, %v", st, err)
	}
	if _, err := admin.PlanReset(ctx, adm, group, topic, admin.Latest(), 7); !errors.Is(err, pipeline.ErrUnknownPartition) {
		t.Fatalf("partition 7 of a 1-partition topic: %v, want ErrUnknownPartition", err)
	}
}

// TestResetMissingGroup: a reset of a group that does not exist (a typo in
// its name) is refused with ErrGroupMissing and commits nothing, so the
// group is still missing; with CreateGroup it commits the offsets, which
// creates the group.
func TestResetMissingGroup(t *testing.T) {
	brokers := integration.Kafka(t)
	topic := integration.CreateTopic(t, brokers, 1)
	group := integration.Group(t)
	cl := integration.NewKafkaClient(t, brokers)
	adm := kadm.NewClient(cl)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	moves := []admin.Move{{Partition: 0, Before: -1, After: 0}}
	err := admin.ResetOffsets(ctx, adm, group, topic, moves)
	var ce *admin.CheckError
	if !errors.Is(err, admin.ErrGroupMissing) || !errors.As(err, &ce) || ce.Value != group || ce.Fix == "" {
		t.Fatalf("reset of a missing group: %v, want a *CheckError wrapping ErrGroupMissing naming the group and the fix", err)
	}
	if err := admin.RequireGroup(ctx, adm, group); !errors.Is(err, admin.ErrGroupMissing) {
		t.Fatalf("RequireGroup after the refused reset: %v, want ErrGroupMissing (nothing committed)", err)
	}
	if err := admin.RequireGroup(ctx, adm, group, admin.CreateGroup()); err != nil {
		t.Fatalf("RequireGroup with CreateGroup: %v", err)
	}
	if err := admin.ResetOffsets(ctx, adm, group, topic, moves, admin.CreateGroup()); err != nil {
		t.Fatalf("reset with CreateGroup: %v", err)
	}
	offs, err := adm.FetchOffsets(ctx, group)
	if err != nil {
		t.Fatal(err)
	}
	if o, ok := offs.Lookup(topic, 0); !ok || o.At != 0 {
		t.Fatalf("committed after the reset with CreateGroup: %+v %v, want offset 0", o, ok)
	}
	if err := admin.RequireGroup(ctx, adm, group); err != nil {
		t.Fatalf("RequireGroup once created: %v", err)
	}
}

// TestDeadLetterPartitions: a dead-letter topic with fewer partitions than
// its source is reported with both counts (a warning: exactly once does not
// depend on it); one with as many is not, nor one that does not exist.
func TestDeadLetterPartitions(t *testing.T) {
	brokers := integration.Kafka(t)
	fewer := integration.CreateTopic(t, brokers, 4)
	integration.CreateDeadLetterTopic(t, brokers, fewer, 2)
	same := integration.CreateTopic(t, brokers, 2)
	integration.CreateDeadLetterTopic(t, brokers, same, 2)
	missing := integration.CreateTopic(t, brokers, 1)
	adm := kadm.NewClient(integration.NewKafkaClient(t, brokers))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	got, err := admin.CheckDeadLetterPartitions(ctx, adm, "", []string{fewer, same, missing})
	want := []admin.DeadLetterPartitions{{Source: fewer, SourcePartitions: 4, DeadLetter: fewer + ".dlq", DeadLetterPartitions: 2}}
	if err != nil || len(got) != 1 || got[0] != want[0] {
		t.Fatalf("CheckDeadLetterPartitions = %+v, %v; want %+v", got, err, want)
	}
}
