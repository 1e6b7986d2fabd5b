package pipeline

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
)

// TestFatalFetch: authorization refusals reported through a poll stop the
// pipeline (naming the partition when there is one); what franz-go retries
// by itself does not.
func TestFatalFetch(t *testing.T) {
	for _, tc := range []struct {
		topic string
		err   error
		fatal bool
	}{
		{"", fmt.Errorf("unable to join group session: %w", kerr.GroupAuthorizationFailed), true},
		{"orders", kerr.TopicAuthorizationFailed, true},
		{"", kerr.ClusterAuthorizationFailed, true},
		{"", kerr.SaslAuthenticationFailed, true},
		{"orders", kerr.NotLeaderForPartition, false},
		{"orders", kerr.UnknownTopicOrPartition, false},
		{"", context.Canceled, false},
		{"", errors.New("connection refused"), false},
	} {
		err := fatalFetch(tc.topic, 3, tc.err)
		if (err != nil) != tc.fatal {
			t.Errorf("fatalFetch(%q, %v) = %v, want fatal %v", tc.topic, tc.err, err, tc.fatal)
		}
		if err != nil && (!errors.Is(err, tc.err) || (tc.topic != "" && !strings.Contains(err.Error(), tc.topic+"/3"))) {
			t.Errorf("fatalFetch(%q, %v) = %v: want it wrapped, naming the partition", tc.topic, tc.err, err)
		}
	}
}
