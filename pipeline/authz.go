package pipeline

import (
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
)

// authzErrors are the broker's refusals of the client's principal: no
// retry, rejoin or backoff can fix them, only an ACL can.
var authzErrors = []error{
	kerr.GroupAuthorizationFailed, kerr.TopicAuthorizationFailed, kerr.ClusterAuthorizationFailed,
	kerr.TransactionalIDAuthorizationFailed, kerr.SaslAuthenticationFailed,
}

// fatalFetch returns the error that stops the pipeline for an error franz-go
// reported through a poll, or nil for one it retries by itself (a leader
// moving, a broker restarting). An authorization failure is fatal: franz-go
// would retry joining or fetching forever, and the pipeline would sit in
// the group doing nothing while it logs.
func fatalFetch(topic string, partition int32, err error) error {
	for _, target := range authzErrors {
		if errors.Is(err, target) {
			if topic == "" { // the group, not a partition
				return fmt.Errorf("pipeline: kafka refused the consumer's principal: %w", err)
			}
			return fmt.Errorf("pipeline: kafka refused the consumer's principal on %s/%d: %w", topic, partition, err)
		}
	}
	return nil
}
