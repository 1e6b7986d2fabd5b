package itest

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
)

// AwaitACLs waits until the broker's authorizer lists n ACLs of principal:
// it applies new ACLs from the metadata log a moment after CreateACLs
// Answers.
func (k *TlsKafka) AwaitACLs(ctx context.Context, t *testing.T, principal string, n int) {
	t.Helper()
	for {
		res, err := k.Admin.DescribeACLs(ctx, kadm.NewACLs().AnyResource().Allow(principal).AllowHosts().
			Operations(kadm.OpAny).ResourcePatternType(kadm.ACLPatternAny))
		got := 0
		if err == nil {
			for _, r := range res {
				if r.Err != nil {
					err = r.Err
				}
				got += len(r.Described)
			}
		}
		if err == nil && got >= n {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the ACLs of %s never took effect (%d of %d; last: %v)", principal, got, n, err)
		case <-time.After(50 * time.Millisecond): // poll interval of a condition
		}
	}
}
