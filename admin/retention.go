package admin

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
)

// Retention is a topic whose records outlive their ledger entries: its
// retention.ms is longer than the ledger TTL, or infinite. A record
// re-read after its entry expired (a group reset to earliest, a consumer
// far behind, a replay) applies its effect a second time.
type Retention struct {
	// Topic is the topic's name.
	Topic string
	// Retention is its retention.ms; -1 for infinite.
	Retention time.Duration
	// Err is set when the topic's configuration could not be read; it was
	// then not checked.
	Err error
}

// Infinite reports whether the topic keeps its records forever.
func (r Retention) Infinite() bool { return r.Retention < 0 }

// CheckRetention compares each topic's retention.ms with the ledger TTL
// and returns the topics whose records outlive their ledger entries, and
// those whose configuration could not be read (Err set), in the order the
// broker answers. An error means the request failed and nothing was
// checked. One DescribeConfigs request.
func CheckRetention(ctx context.Context, adm *kadm.Client, ttl time.Duration, topics ...string) ([]Retention, error) {
	rcs, err := adm.DescribeTopicConfigs(ctx, topics...)
	if err != nil {
		return nil, err
	}
	var out []Retention
	for _, rc := range rcs {
		if rc.Err != nil {
			out = append(out, Retention{Topic: rc.Name, Err: rc.Err})
			continue
		}
		for _, c := range rc.Configs {
			if c.Key != "retention.ms" || c.Value == nil {
				continue
			}
			ms, err := strconv.ParseInt(*c.Value, 10, 64)
			if err != nil {
				out = append(out, Retention{Topic: rc.Name, Err: fmt.Errorf("retention.ms %q: %w", *c.Value, err)})
				continue
			}
			switch d := time.Duration(ms) * time.Millisecond; {
			case ms < 0:
				out = append(out, Retention{Topic: rc.Name, Retention: -1})
			case d > ttl:
				out = append(out, Retention{Topic: rc.Name, Retention: d})
			}
		}
	}
	return out, nil
}
