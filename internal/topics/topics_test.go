package topics_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/shardpipe/shardpipe/internal/topics"
)

// TestCreateFake runs Create and WaitLeaders on kfake: fast, and no claim
// about Kafka (integration's TestCreateTopicHelper runs the same cases, and
// a refused name, on the real broker).
func TestCreateFake(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	name := func(s string) string { return "t-" + s }
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	retention := "3600000"
	fresh := topics.Spec{Name: name("a"), Partitions: 3, Configs: map[string]*string{"retention.ms": &retention}}
	created, err := topics.Create(ctx, adm, fresh)
	if err != nil || !created {
		t.Fatalf("Create(%s) = %v, %v; want created", fresh.Name, created, err)
	}
	md, err := adm.Metadata(ctx, fresh.Name)
	if err != nil {
		t.Fatal(err)
	}
	td := md.Topics[fresh.Name]
	if len(td.Partitions) != 3 {
		t.Fatalf("after Create, metadata shows %d partitions of %s, want 3", len(td.Partitions), fresh.Name)
	}
	for _, p := range td.Partitions {
		if p.Leader < 0 || p.Err != nil {
			t.Fatalf("after Create, partition %d of %s has leader %d (%v)", p.Partition, fresh.Name, p.Leader, p.Err)
		}
	}
	cfgs, err := adm.DescribeTopicConfigs(ctx, fresh.Name)
	if err != nil {
		t.Fatal(err)
	}
	if c, err := cfgs.On(fresh.Name, nil); err != nil || !hasConfig(c, "retention.ms", retention) {
		t.Fatalf("created %s without retention.ms=%s: %+v %v", fresh.Name, retention, c, err)
	}

	if created, err := topics.Create(ctx, adm, fresh); created || !errors.Is(err, kerr.TopicAlreadyExists) ||
		!strings.Contains(err.Error(), fresh.Name) {
		t.Fatalf("Create of an existing topic = %v, %v; want an error naming it wrapping TOPIC_ALREADY_EXISTS", created, err)
	}
	again := fresh
	again.ExistOK, again.Partitions = true, 5
	if created, err := topics.Create(ctx, adm, again); created || err != nil {
		t.Fatalf("Create with ExistOK of an existing topic = %v, %v; want not created, no error", created, err)
	}
	short, cancelShort := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancelShort()
	if err := topics.WaitLeaders(short, adm, fresh.Name, name("absent")); !errors.Is(err, context.DeadlineExceeded) ||
		!strings.Contains(err.Error(), name("absent")) {
		t.Fatalf("WaitLeaders on a missing topic = %v; want the deadline, naming the topics", err)
	}
}

func hasConfig(c kadm.ResourceConfig, key, value string) bool {
	for _, x := range c.Configs {
		if x.Key == key && x.Value != nil && *x.Value == value {
			return true
		}
	}
	return false
}
