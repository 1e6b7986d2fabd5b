// Package topics creates Kafka topics and waits until they can be used: the
// one topic-creation path of the command (produce), the bench, the fault
// suite and the test kit.
package topics

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
)

// Spec describes a topic to create.
type Spec struct {
	// Name is the topic's name.
	Name string
	// Partitions is the number of partitions (at least 1).
	Partitions int32
	// Replication is the replication factor: 0 means 1, -1 the broker's
	// default.
	Replication int16
	// Configs are topic configs (for example retention.ms); nil keeps the
	// broker's defaults.
	Configs map[string]*string
	// ExistOK makes an existing topic of that name no error: Create then
	// waits for it as for a new one and reports it was not created. Its
	// partitions and configs are left as they are.
	ExistOK bool
}

// pollInterval is how often WaitLeaders asks for metadata: the broker sends
// no event when a partition gets its leader.
const pollInterval = 50 * time.Millisecond

// Create creates the topic s describes, then waits (WaitLeaders) until the
// broker adm talks to serves metadata with a leader for each of its
// partitions, so that producers and consumers started next find it whole.
// It reports whether it created the topic. A topic that exists already
// fails with an error wrapping kerr.TopicAlreadyExists, unless s.ExistOK.
// It costs one CreateTopics request and a Metadata request every 50 ms
// until the leaders are there (usually one on a healthy cluster); ctx
// bounds the wait.
func Create(ctx context.Context, adm *kadm.Client, s Spec) (created bool, err error) {
	repl := s.Replication
	if repl == 0 {
		repl = 1
	}
	_, err = adm.CreateTopic(ctx, s.Partitions, repl, s.Configs, s.Name)
	switch {
	case err == nil:
		created = true
	case s.ExistOK && errors.Is(err, kerr.TopicAlreadyExists):
	default:
		return false, fmt.Errorf("create topic %s with %d partitions: %w", s.Name, s.Partitions, err)
	}
	least := int32(1)
	if created {
		least = s.Partitions
	}
	return created, waitLeaders(ctx, adm, least, s.Name)
}

// WaitLeaders waits until the broker adm talks to serves metadata for each
// of topics with at least one partition and a leader for every partition.
// It polls Metadata every 50 ms until then or until ctx ends; the error
// then names the topics and the last metadata error.
func WaitLeaders(ctx context.Context, adm *kadm.Client, topics ...string) error {
	return waitLeaders(ctx, adm, 1, topics...)
}

// waitLeaders is WaitLeaders for topics of at least least partitions each.
func waitLeaders(ctx context.Context, adm *kadm.Client, least int32, topics ...string) error {
	tick := time.NewTicker(pollInterval)
	defer tick.Stop()
	for {
		md, err := adm.Metadata(ctx, topics...)
		ready := err == nil
		for _, name := range topics {
			td, ok := md.Topics[name]
			ready = ready && ok && td.Err == nil && len(td.Partitions) >= int(max(least, 1))
			for _, p := range td.Partitions {
				ready = ready && p.Err == nil && p.Leader >= 0
			}
		}
		if ready {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("topics %v have no leader for every partition: %w (last error %v)", topics, ctx.Err(), err)
		case <-tick.C:
		}
	}
}
