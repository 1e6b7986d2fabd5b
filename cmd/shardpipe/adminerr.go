package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/shardpipe/shardpipe/admin"
)

// problemLine words one error of package admin for the command: a request
// that timed out says within --connect-timeout, the Kafka brokers of k are
// named, and a problem a flag can accept or fix names the flag.
func problemLine(err error, k kafkaConn, timeout time.Duration) string {
	brokers := k.brokers
	var eof *kgo.ErrFirstReadEOF
	if errors.As(err, &eof) && !k.sec.TLSOn() && !errors.Is(err, context.DeadlineExceeded) {
		// franz-go guesses TLS or SASL missing; with no TLS configured, the
		// common cause is a port that is no broker's client listener.
		return fmt.Sprintf("kafka %s: the server closed the connection right after the first request, and TLS is off: the address is most likely not a Kafka broker's client listener but a KRaft controller's listener (controller.listener.names) or another service's port; check %s against the brokers' advertised.listeners; if it is a broker's client listener, it wants TLS (--kafka-tls) or SASL (--kafka-sasl-mechanism)",
			strings.Join(brokers, ","), flagRef(fBrokers))
	}
	if l, ok := stepProblem(err, "kafka "+strings.Join(brokers, ","), "--"); ok {
		return l
	}
	var ue *admin.UnreachableError
	if errors.As(err, &ue) && ue.Describe(brokers, timeout) != ue.Error() {
		return ue.Describe(brokers, timeout)
	}
	var ce *admin.CheckError
	if !errors.As(err, &ce) {
		return err.Error()
	}
	switch {
	case errors.Is(err, admin.ErrClusterNode):
		return fmt.Sprintf("%s: the server is a Redis Cluster node (cluster_enabled:1); pass %s or list the nodes, or writes to keys on other nodes fail with MOVED",
			ce.Server, flagRef(fRedisCluster))
	case errors.Is(err, admin.ErrEviction):
		return fmt.Sprintf("%s, or pass %s to accept that", err, flagRef(fAllowEviction))
	case errors.Is(err, admin.ErrNoPersistence):
		return fmt.Sprintf("%s, or pass %s to accept that", err, flagRef(fAllowNoPersistence))
	case errors.Is(err, admin.ErrGroupMissing):
		return fmt.Sprintf("kafka: group %q does not exist%s: check %s (a mistyped name), or pass %s to create it with these offsets",
			ce.Value, ce.DidYouMean(), flagRef(fGroup), flagRef(fCreate))
	case errors.Is(err, admin.ErrTopicMissing) && ce.Setting == "topic":
		return err.Error() + " (create it, or let 'shardpipe produce --partitions N' create it)"
	case errors.Is(err, admin.ErrTopicMissing) && ce.Setting == "dead-letter topic":
		return fmt.Sprintf("%s (create it with as many partitions as its source topic, or let 'shardpipe produce --partitions N' create it; or pass %s stop)",
			err, flagRef(fOnPoison))
	}
	return err.Error()
}

// exitFor maps an error of package admin to the command's exit error: a
// problem a flag fixes (a Redis Cluster node given as one node, settings
// that break the ledger) is a usage error (exit 2), a server that does not
// answer or a topic or group that does not exist is unavailable (exit 3),
// anything else a failure (exit 1). k is the brokers the errors come from
// (the zero kafkaConn for Redis's).
func exitFor(err error, k kafkaConn, timeout time.Duration) error {
	var unav, usage, fail []string
	for _, e := range admin.Problems(err) {
		l := problemLine(e, k, timeout)
		switch {
		case errors.Is(e, admin.ErrClusterNode), errors.Is(e, admin.ErrEviction), errors.Is(e, admin.ErrNoPersistence):
			usage = append(usage, l)
		case errors.Is(e, admin.ErrUnreachable), admin.StepFailed(e), errors.Is(e, admin.ErrTopicMissing), errors.Is(e, admin.ErrGroupMissing),
			errors.Is(e, admin.ErrRedisVersion):
			unav = append(unav, l)
		default:
			fail = append(fail, l)
		}
	}
	switch {
	case len(fail) > 0:
		return &exitError{code: exitFailure, lines: fail}
	case len(unav) > 0:
		return unavailableErr(append(unav, usage...)...)
	case len(usage) > 0:
		return usageErr(usage...)
	}
	return nil
}
