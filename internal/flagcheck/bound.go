package flagcheck

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/shardpipe/shardpipe/pipeline"
)

// ParseBound reads an offset (a whole number), an RFC 3339 time, or a
// positive duration, which means that long before now.
func ParseBound(s string, now time.Time) (pipeline.Bound, error) {
	s = strings.TrimSpace(s)
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		if n < 0 {
			return pipeline.Bound{}, fmt.Errorf("offset %d is negative", n)
		}
		return pipeline.AtOffset(n), nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return pipeline.AtTime(t), nil
	}
	if d, err := time.ParseDuration(s); err == nil {
		if d <= 0 {
			return pipeline.Bound{}, fmt.Errorf("duration %v: want a positive duration (how long ago)", d)
		}
		return pipeline.AtTime(now.Add(-d)), nil
	}
	return pipeline.Bound{}, fmt.Errorf("want an offset (0), an RFC 3339 time (2026-11-30T04:00:00Z) or a duration ago (90m)")
}
