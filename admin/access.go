package admin

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/redis/go-redis/v9"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Access is what a command's principals must be allowed beyond what
// Preflight shows (the brokers answer, the topics can be described, Redis
// runs the ledger's scripts), each checked read-only by CheckAccess.
type Access struct {
	// Group is the consumer group to describe; "" checks none (replay
	// reads by assignment).
	Group string
	// Topics are the topics to read (one Fetch); none checks none.
	Topics []string
	// Keys are Redis keys the ACL user must reach (EXISTS).
	Keys []string
}

// CheckRedisKeys asks Redis, read-only (EXISTS), about each key: a user
// whose ACL rule does not cover the ledger's keys (or EXISTS) is refused
// with NOPERM here, before any record is read, instead of at the first
// batch. It writes nothing. A refusal is an *UnreachableError
// (ErrUnreachable) naming the key; package secure's Diagnose names the
// step (authorization). Any other failure (Redis down or restarting, a
// timeout) is no access problem: it is left to the pipeline, which waits
// for Redis, and returns nil, as the check before it (preflight) already
// found Redis answering.
func CheckRedisKeys(ctx context.Context, rdb redis.UniversalClient, name string, keys ...string) error {
	for _, k := range keys {
		if err := rdb.Exists(ctx, k).Err(); err != nil && strings.HasPrefix(err.Error(), "NOPERM") {
			return &UnreachableError{Server: "redis " + name, Request: "EXISTS " + k, Err: err}
		}
	}
	return nil
}

// CheckGroupAccess describes the consumer group (DescribeGroups): a
// principal without Describe on the group is refused with
// GROUP_AUTHORIZATION_FAILED here, before joining it. It does not show that
// the principal may Read the group (joining does). A refusal is an
// *UnreachableError (ErrUnreachable); any other failure (a coordinator not
// yet available on a new cluster, a timeout) is left to the join, which
// retries, and returns nil.
func CheckGroupAccess(ctx context.Context, adm *kadm.Client, group string) error {
	gs, err := adm.DescribeGroups(ctx, group)
	if err == nil {
		err = gs.Error()
	}
	if errors.Is(err, kerr.GroupAuthorizationFailed) {
		return &UnreachableError{Server: "kafka", Request: "DescribeGroups " + group, Err: err}
	}
	return nil
}

// CheckTopicRead sends one Fetch of each topic's first partition, from its
// start, at most a byte (the broker still returns a first batch): a
// principal without Read on the topic is refused with
// TOPIC_AUTHORIZATION_FAILED here, instead of by every fetch of the
// consumer, which franz-go retries. It reads, commits nothing. A refusal
// is an *UnreachableError naming the topic; any other failure (a topic
// without a leader yet, the partition not on the broker asked) is left to
// the consumer and returns nil. Its cost: a Metadata and a Fetch request.
func CheckTopicRead(ctx context.Context, cl *kgo.Client, topics ...string) error {
	if len(topics) == 0 {
		return nil
	}
	md, err := kadm.NewClient(cl).Metadata(ctx, topics...)
	if err != nil {
		return nil
	}
	req := kmsg.NewPtrFetchRequest()
	req.MaxBytes, req.MinBytes, req.MaxWaitMillis = 1, 0, 0
	names := map[[16]byte]string{}
	for _, t := range topics {
		td, ok := md.Topics[t]
		if !ok || td.Err != nil {
			continue
		}
		rt := kmsg.NewFetchRequestTopic()
		rt.Topic, rt.TopicID, names[td.ID] = t, td.ID, t
		rp := kmsg.NewFetchRequestTopicPartition()
		rp.PartitionMaxBytes = 1
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
	}
	if len(req.Topics) == 0 {
		return nil
	}
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return nil
	}
	for _, rt := range resp.Topics {
		for _, rp := range rt.Partitions {
			if err := kerr.ErrorForCode(rp.ErrorCode); errors.Is(err, kerr.TopicAuthorizationFailed) {
				name := rt.Topic
				if name == "" { // v13+: by ID
					name = names[rt.TopicID]
				}
				return &UnreachableError{Server: "kafka", Request: fmt.Sprintf("Fetch %s/%d", name, rp.Partition), Err: err}
			}
		}
	}
	return nil
}

// CheckAccess checks a's group (CheckGroupAccess), then a's topics
// (CheckTopicRead), then a's keys (CheckRedisKeys, rdb named name), and
// returns the first refusal.
func CheckAccess(ctx context.Context, cl *kgo.Client, a Access, rdb redis.UniversalClient, name string) error {
	if a.Group != "" {
		if err := CheckGroupAccess(ctx, kadm.NewClient(cl), a.Group); err != nil {
			return err
		}
	}
	if err := CheckTopicRead(ctx, cl, a.Topics...); err != nil {
		return err
	}
	return CheckRedisKeys(ctx, rdb, name, a.Keys...)
}
