package admin

import (
	"context"
	"errors"
	"fmt"
	"sort"

	"github.com/twmb/franz-go/pkg/kadm"
)

// GroupStatus is a consumer group's state, members and per-partition lag.
// The JSON names are those of `shardpipe status --json`.
type GroupStatus struct {
	// Group is the group ID.
	Group string `json:"group"`
	// Type is the group protocol: "classic" or "consumer" (KIP-848).
	Type string `json:"type"`
	// State is the broker's group state (Stable, Empty, ...).
	State string `json:"state"`
	// Epoch is the group epoch of a consumer-protocol group; nil for a
	// classic group, whose generation DescribeGroups does not report
	// (EpochNote says so).
	Epoch *int32 `json:"epoch"`
	// EpochNote says why Epoch is nil for a classic group; "" otherwise.
	EpochNote string `json:"epoch_note,omitempty"`
	// Members are the group's members, as the broker lists them.
	Members []Member `json:"members"`
	// Partitions are the group's positions, with each partition's owner.
	Partitions []PartitionLag `json:"partitions"`
	// Lag is the sum of the partitions' lag.
	Lag int64 `json:"lag"`
}

// Member is one member of a group.
type Member struct {
	// ID is the member ID the broker gave.
	ID string `json:"id"`
	// ClientID is the client ID the member reported.
	ClientID string `json:"client_id"`
	// Host is the member's address as the broker saw it.
	Host string `json:"host"`
	// Epoch is the member epoch (consumer protocol); nil for classic.
	Epoch *int32 `json:"epoch,omitempty"`
}

// DescribeGroup gathers the status of group over topics (when none, the
// topics the group has committed offsets for): its protocol, state and
// members (DescribeGroups for classic groups, ConsumerGroupDescribe for
// KIP-848 ones, with the group and member epochs), and per partition the
// committed, last stable and log-end offsets, the lag and the owner. A
// group that does not exist is a *CheckError wrapping ErrGroupMissing; a
// topic that does not exist one wrapping ErrTopicMissing each, joined
// (their Near name the closest existing groups or topics); no
// answer from the brokers an *UnreachableError. It costs ListGroups, one
// describe, a Metadata request and GroupLag's requests.
func DescribeGroup(ctx context.Context, adm *kadm.Client, group string, topics ...string) (GroupStatus, error) {
	st := GroupStatus{Group: group}
	listed, err := adm.ListGroups(ctx)
	if err != nil {
		return st, unreachable("kafka", "ListGroups", err, fmt.Sprintf("kafka: cannot reach a broker: %v", err))
	}
	lg, ok := listed[group]
	if !ok {
		// ListGroups leaves out a group the principal may not describe.
		if err := CheckGroupAccess(ctx, adm, group); err != nil {
			return st, err
		}
		e := &CheckError{Server: "kafka", Setting: "group", Value: group, Err: ErrGroupMissing,
			Fix: "start a consumer of the group", Near: near(group, listed.Groups())}
		e.msg = fmt.Sprintf("kafka: group %q does not exist%s", group, e.DidYouMean())
		return st, e
	}
	st.Type, st.State = lg.GroupType, lg.State
	if st.Type == "" {
		st.Type = "classic"
	}
	owners, err := describeMembers(ctx, adm, &st)
	if err != nil {
		return st, err
	}
	if len(topics) == 0 {
		offs, err := adm.FetchOffsets(ctx, group)
		if err != nil {
			return st, fmt.Errorf("committed offsets of group %q: %w", group, err)
		}
		topics = offs.Partitions().Topics()
		sort.Strings(topics)
	} else {
		_, missing, err := TopicPartitions(ctx, adm, topics...)
		if err != nil {
			return st, err
		}
		var errs []error
		var existing []string
		if len(missing) > 0 {
			existing = topicNames(ctx, adm)
		}
		for _, t := range missing {
			errs = append(errs, missingTopic("topic", t, "create it", existing))
		}
		if err := errors.Join(errs...); err != nil {
			return st, err
		}
	}
	if len(topics) > 0 {
		if st.Partitions, err = GroupLag(ctx, adm, group, topics...); err != nil {
			return st, err
		}
	}
	for i := range st.Partitions {
		p := &st.Partitions[i]
		p.Member = owners[p.Topic][p.Partition]
	}
	st.Lag = TotalLag(st.Partitions)
	return st, nil
}

// describeMembers fills st's state and members by st.Type's protocol and
// returns each partition's owner.
func describeMembers(ctx context.Context, adm *kadm.Client, st *GroupStatus) (map[string]map[int32]string, error) {
	owners := map[string]map[int32]string{}
	own := func(topic string, p int32, member string) {
		if owners[topic] == nil {
			owners[topic] = map[int32]string{}
		}
		owners[topic][p] = member
	}
	if st.Type == "consumer" {
		ds, err := adm.DescribeConsumerGroups(ctx, st.Group)
		if err != nil {
			return nil, fmt.Errorf("describe consumer group %q: %w", st.Group, err)
		}
		d := ds[st.Group]
		if d.Err != nil {
			return nil, fmt.Errorf("describe consumer group %q: %w", st.Group, d.Err)
		}
		st.State = d.State
		epoch := d.Epoch
		st.Epoch = &epoch
		for _, m := range d.Members {
			me := m.MemberEpoch
			st.Members = append(st.Members, Member{ID: m.MemberID, ClientID: m.ClientID, Host: m.ClientHost, Epoch: &me})
			for t, ps := range m.Assignment {
				for p := range ps {
					own(t, p, m.MemberID)
				}
			}
		}
		return owners, nil
	}
	ds, err := adm.DescribeGroups(ctx, st.Group)
	if err != nil {
		return nil, fmt.Errorf("describe group %q: %w", st.Group, err)
	}
	d := ds[st.Group]
	if d.Err != nil {
		return nil, fmt.Errorf("describe group %q: %w", st.Group, d.Err)
	}
	st.State = d.State
	st.EpochNote = "classic groups do not report their generation (DescribeGroups has no such field)"
	for _, m := range d.Members {
		st.Members = append(st.Members, Member{ID: m.MemberID, ClientID: m.ClientID, Host: m.ClientHost})
		if a, ok := m.Assigned.AsConsumer(); ok {
			for _, t := range a.Topics {
				for _, p := range t.Partitions {
					own(t.Topic, p, m.MemberID)
				}
			}
		}
	}
	return owners, nil
}
