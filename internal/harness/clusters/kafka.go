package clusters

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Kafka is a Kafka of three KRaft nodes (each a broker and a controller)
// run by scripts/services.sh. Node N has node.id N.
type Kafka struct {
	s       script
	Brokers []string // node N's broker address at index N-1
}

// StartKafka starts the three nodes with their state in dir (a directory
// of its own) and waits until the metadata lists all three brokers.
func StartKafka(ctx context.Context, root, dir string) (*Kafka, error) {
	k := &Kafka{s: script{root: root, dir: dir}}
	if err := k.s.start(ctx, "kafka-cluster"); err != nil {
		return nil, err
	}
	b, err := k.s.variable(ctx, "KAFKA_CLUSTER_BROKERS")
	if err != nil {
		return nil, err
	}
	k.Brokers = strings.Split(b, ",")
	return k, nil
}

// Start starts the nodes that are down, on their ports and with their data,
// and waits until the metadata lists all three brokers.
func (k *Kafka) Start(ctx context.Context) error {
	_, err := k.s.run(ctx, "start", "kafka-cluster")
	return err
}

// Stop stops every node gracefully (or node n only, when given).
func (k *Kafka) Stop(ctx context.Context, n ...int) error {
	args := []string{"stop", "kafka-cluster"}
	for _, x := range n {
		args = append(args, strconv.Itoa(x))
	}
	_, err := k.s.run(ctx, args...)
	return err
}

// Kill sends SIGKILL to node n and waits until it is gone.
func (k *Kafka) Kill(ctx context.Context, n int) error {
	_, err := k.s.run(ctx, "kill", "kafka-cluster", strconv.Itoa(n))
	return err
}

// Leaders returns, per partition of topic, its leader's node ID.
func Leaders(ctx context.Context, adm *kadm.Client, topic string) (map[int32]int32, error) {
	md, err := adm.Metadata(ctx, topic)
	if err != nil {
		return nil, err
	}
	td, ok := md.Topics[topic]
	if !ok || td.Err != nil {
		return nil, fmt.Errorf("metadata of %s: %v", topic, td.Err)
	}
	out := make(map[int32]int32, len(td.Partitions))
	for p, pd := range td.Partitions {
		if pd.Err != nil {
			return nil, fmt.Errorf("%s/%d: %w", topic, p, pd.Err)
		}
		out[p] = pd.Leader
	}
	return out, nil
}

// BusiestLeader returns the node leading the most partitions of topic, and
// those partitions.
func BusiestLeader(leaders map[int32]int32) (node int32, parts []int32) {
	count := map[int32][]int32{}
	for p, l := range leaders {
		count[l] = append(count[l], p)
	}
	for l, ps := range count {
		if len(ps) > len(parts) || len(ps) == len(parts) && l < node {
			node, parts = l, ps
		}
	}
	return node, parts
}

// Victim picks the node to kill: the group's coordinator when it leads at
// least two partitions of topic (so the kill moves both the group's
// coordinator and several leaderships), else the busiest leader. It returns
// the node, the partitions it leads and whether it is the coordinator.
func Victim(ctx context.Context, adm *kadm.Client, group, topic string) (int32, []int32, bool, error) {
	leaders, err := Leaders(ctx, adm, topic)
	if err != nil {
		return 0, nil, false, err
	}
	if co, ok := adm.FindGroupCoordinators(ctx, group)[group]; ok && co.Err == nil {
		var led []int32
		for p, l := range leaders {
			if l == co.NodeID {
				led = append(led, p)
			}
		}
		if len(led) >= 2 {
			return co.NodeID, led, true, nil
		}
	}
	n, parts := BusiestLeader(leaders)
	return n, parts, false, nil
}

// AwaitLeadersOff waits, at most d, until no partition of topic has node as
// its leader (the controller moved them after the node was killed) and
// returns the new leaders. A fresh client per poll reads the controller's
// current view, not a cache.
func (k *Kafka) AwaitLeadersOff(ctx context.Context, topic string, node int32, d time.Duration) (map[int32]int32, error) {
	var leaders map[int32]int32
	err := poll(ctx, d, 200*time.Millisecond, fmt.Sprintf("every leader of %s off node %d", topic, node), func() (bool, error) {
		var alive []string
		for i, b := range k.Brokers {
			if int32(i+1) != node {
				alive = append(alive, b)
			}
		}
		cl, err := kgo.NewClient(kgo.SeedBrokers(alive...), kgo.RequestRetries(0), kgo.RetryTimeout(time.Second))
		if err != nil {
			return false, err
		}
		defer cl.Close()
		pctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		defer cancel()
		l, err := Leaders(pctx, kadm.NewClient(cl), topic)
		if err != nil {
			return false, err
		}
		for _, n := range l {
			if n == node || n < 0 {
				return false, nil
			}
		}
		leaders = l
		return true, nil
	})
	return leaders, err
}
