package pipeline

import (
	"errors"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/twmb/franz-go/pkg/kerr"
)

var (
	// errNoTopic: the dead-letter topic is not in the broker's metadata.
	// Right after creating it that is brief; a topic nobody created stays so.
	errNoTopic = errors.New("dead-letter topic not found (create it)")
	// errBadMarker: a marker key holds a value that is no marker.
	errBadMarker = errors.New("dead-letter marker holds no marker")
)

// dlqVerdict says what a failed dead-letter delivery calls for.
type dlqVerdict uint8

const (
	dlqRetry   dlqVerdict = iota // Kafka or Redis down, a lease to wait out: try again
	dlqMissing                   // the topic is unknown: try again for a lease, then stop
	dlqStop                      // no retry can land it: stop the pipeline
)

// judgeDLQ classifies an error of deadLetters.deliver.
func judgeDLQ(err error) dlqVerdict {
	// No retry of the same write fixes these: the record is too large for
	// the client or the topic (kgo fails an oversized record with
	// kerr.MessageTooLarge itself), the broker rejects it as invalid, or the
	// client may not write to the topic or produce at all.
	for _, target := range [...]error{
		kerr.MessageTooLarge, kerr.RecordListTooLarge, kerr.InvalidRecord,
		kerr.TopicAuthorizationFailed, kerr.ClusterAuthorizationFailed, kerr.InvalidTopicException,
		kerr.PolicyViolation,
	} {
		if errors.Is(err, target) {
			return dlqStop
		}
	}
	switch {
	case errors.Is(err, errBadMarker) || errors.Is(err, errScanStalled) || redisRefused(err):
		return dlqStop
	case errors.Is(err, errNoTopic) || errors.Is(err, kerr.UnknownTopicOrPartition):
		return dlqMissing
	}
	return dlqRetry
}

// redisRefused reports whether err is a Redis reply refusing the marker
// commands as configured: the key holds another type, the ACL user may not
// run them, or scripts are disabled.
func redisRefused(err error) bool {
	var rerr redis.Error
	if !errors.As(err, &rerr) || errors.Is(err, redis.Nil) {
		return false
	}
	msg := rerr.Error()
	for _, s := range []string{"WRONGTYPE", "NOPERM", "unknown command"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

// dlqGiveUp tracks one record's failed deliveries: it reports whether the
// latest error, at now, should stop the pipeline. A missing topic stops it
// once it has been missing for grace without a break.
type dlqGiveUp struct {
	grace        time.Duration
	missingSince time.Time
}

func (g *dlqGiveUp) stop(err error, now time.Time) bool {
	switch judgeDLQ(err) {
	case dlqStop:
		return true
	case dlqMissing:
		if g.missingSince.IsZero() {
			g.missingSince = now
		}
		return now.Sub(g.missingSince) >= g.grace
	}
	g.missingSince = time.Time{}
	return false
}
