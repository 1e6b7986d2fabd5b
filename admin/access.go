package admin

import (
	"context"
	"errors"

	"github.com/redis/go-redis/v9"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
)

// CheckRedisKeys asks Redis, read-only (EXISTS), about each key: a user
// whose ACL rule does not cover the ledger's keys (or EXISTS) is refused
// with NOPERM here, before any record is read, instead of at the first
// batch. It writes nothing. A refusal or a failed request is an
// *UnreachableError (ErrUnreachable) naming the key; package secure's
// Diagnose names the step (authorization for NOPERM).
func CheckRedisKeys(ctx context.Context, rdb redis.UniversalClient, name string, keys ...string) error {
	for _, k := range keys {
		if err := rdb.Exists(ctx, k).Err(); err != nil {
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

// CheckAccess is CheckGroupAccess, then, when it passes, CheckRedisKeys:
// the access a consumer needs beyond preflight, named by the first refusal.
func CheckAccess(ctx context.Context, adm *kadm.Client, group string, rdb redis.UniversalClient, name string, keys ...string) error {
	if err := CheckGroupAccess(ctx, adm, group); err != nil {
		return err
	}
	return CheckRedisKeys(ctx, rdb, name, keys...)
}
