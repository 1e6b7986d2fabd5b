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
	p, err := parsePoint(s, now)
	if err != nil {
		return pipeline.Bound{}, err
	}
	if p.isOffset {
		return pipeline.AtOffset(p.offset), nil
	}
	return pipeline.AtTime(p.at), nil
}

// Relative reports whether ParseBound reads s as a duration before now
// (90m), which means another time each time it is read.
func Relative(s string) bool {
	s = strings.TrimSpace(s)
	if _, err := strconv.ParseInt(s, 10, 64); err == nil {
		return false
	}
	if _, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return false
	}
	d, err := time.ParseDuration(s)
	return err == nil && d > 0
}

// point is a bound as ParseBound reads it: an offset, or a time.
type point struct {
	isOffset bool
	offset   int64
	at       time.Time
}

func (p point) String() string {
	if p.isOffset {
		return "offset " + strconv.FormatInt(p.offset, 10)
	}
	return p.at.UTC().Format(time.RFC3339Nano)
}

func parsePoint(s string, now time.Time) (point, error) {
	s = strings.TrimSpace(s)
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		if n < 0 {
			return point{}, fmt.Errorf("offset %d is negative", n)
		}
		return point{isOffset: true, offset: n}, nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return point{at: t}, nil
	}
	if d, err := time.ParseDuration(s); err == nil {
		if d <= 0 {
			return point{}, fmt.Errorf("duration %v: want a positive duration (how long ago)", d)
		}
		return point{at: now.Add(-d)}, nil
	}
	return point{}, fmt.Errorf("want an offset (0), an RFC 3339 time (2026-11-30T04:00:00Z) or a duration ago (90m)")
}

// RangeOrder says why the range from (inclusive) to to (exclusive), as
// ParseBound reads them with now, is empty: "" when from comes before to,
// or when the two cannot be compared without the topic (an offset and a
// time), or when either does not parse (ParseBound says why) or to is ""
// (the end). Two offsets, or two times (RFC 3339 or a duration ago), are
// compared; an equal pair is empty too, to being exclusive.
func RangeOrder(from, to string, now time.Time) string {
	if strings.TrimSpace(to) == "" {
		return ""
	}
	f, ferr := parsePoint(from, now)
	t, terr := parsePoint(to, now)
	switch {
	case ferr != nil || terr != nil || f.isOffset != t.isOffset:
		return ""
	case f.isOffset && f.offset < t.offset, !f.isOffset && f.at.Before(t.at):
		return ""
	}
	return fmt.Sprintf("%s is not before %s", f, t)
}
