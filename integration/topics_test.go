package integration_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/shardpipe/shardpipe/integration"
	"github.com/shardpipe/shardpipe/internal/topics"
)

// TestCreateTopicHelper: on the real broker, topics.Create (the one topic
// creation path of produce, bench, the fault suite and this kit) returns
// only when a fresh client's metadata shows every partition with a leader,
// applies the configs given, refuses an existing topic with
// TOPIC_ALREADY_EXISTS unless told it may exist, and reports the broker's
// refusal of a bad name with the name.
func TestCreateTopicHelper(t *testing.T) {
	t.Parallel()
	brokers := integration.Kafka(t)
	adm := integration.NewAdmin(t, brokers)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	name := integration.Topic(t)
	t.Cleanup(func() { _, _ = integration.NewAdmin(t, brokers).DeleteTopic(context.Background(), name) })
	retention := "3600000"
	spec := topics.Spec{Name: name, Partitions: 6, Configs: map[string]*string{"retention.ms": &retention}}
	if created, err := topics.Create(ctx, adm, spec); err != nil || !created {
		t.Fatalf("Create = %v, %v; want created", created, err)
	}
	md, err := integration.NewAdmin(t, brokers).Metadata(ctx, name) // a client that did not create it
	if err != nil {
		t.Fatal(err)
	}
	if td := md.Topics[name]; len(td.Partitions) != 6 {
		t.Fatalf("after Create, metadata shows %d partitions, want 6", len(td.Partitions))
	} else {
		for _, p := range td.Partitions {
			if p.Leader < 0 || p.Err != nil {
				t.Fatalf("after Create, partition %d has leader %d (%v)", p.Partition, p.Leader, p.Err)
			}
		}
	}
	cfgs, err := adm.DescribeTopicConfigs(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	c, err := cfgs.On(name, nil)
	found := false
	for _, x := range c.Configs {
		found = found || (x.Key == "retention.ms" && x.Value != nil && *x.Value == retention)
	}
	if err != nil || !found {
		t.Fatalf("created without retention.ms=%s: %v", retention, err)
	}
	if created, err := topics.Create(ctx, adm, spec); created || !errors.Is(err, kerr.TopicAlreadyExists) ||
		!strings.Contains(err.Error(), name) {
		t.Fatalf("Create of an existing topic = %v, %v; want an error naming it, wrapping TOPIC_ALREADY_EXISTS", created, err)
	}
	spec.ExistOK = true
	if created, err := topics.Create(ctx, adm, spec); created || err != nil {
		t.Fatalf("Create with ExistOK of an existing topic = %v, %v; want not created, no error", created, err)
	}
	bad := name + "/bad"
	if _, err := topics.Create(ctx, adm, topics.Spec{Name: bad, Partitions: 1}); !errors.Is(err, kerr.InvalidTopicException) ||
		!strings.Contains(err.Error(), bad) {
		t.Fatalf("Create of %q = %v; want the broker's INVALID_TOPIC_EXCEPTION naming it", bad, err)
	}
}
