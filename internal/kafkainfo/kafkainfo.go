// Package kafkainfo asks a Kafka cluster about itself.
package kafkainfo

import (
	"context"
	"fmt"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
)

// BrokerVersion reports each broker's version as the broker itself reports it
// in its ApiVersions response: franz-go's guess from the supported API key
// ranges (for example "v4.4") and the finalized metadata.version feature level.
// Kafka does not send its release string over the wire; this is as close as a
// client gets.
func BrokerVersion(ctx context.Context, adm *kadm.Client) (string, error) {
	vs, err := adm.ApiVersions(ctx)
	if err != nil {
		return "", err
	}
	var parts []string
	for _, v := range vs.Sorted() {
		if v.Err != nil {
			return "", fmt.Errorf("broker %d: ApiVersions: %w", v.NodeID, v.Err)
		}
		s := fmt.Sprintf("broker %d: kafka %s", v.NodeID, v.VersionGuess())
		for _, f := range v.Raw().FinalizedFeatures {
			if f.Name == "metadata.version" {
				s += fmt.Sprintf(" (metadata.version level %d)", f.MaxVersionLevel)
			}
		}
		parts = append(parts, s)
	}
	if len(parts) == 0 {
		return "", fmt.Errorf("no brokers in metadata")
	}
	return strings.Join(parts, "; "), nil
}
