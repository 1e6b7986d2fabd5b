package pipeline

import (
	"time"

	"github.com/shardpipe/shardpipe/checkpoint"
)

// Meter receives the pipeline's timings, for latency histograms (the
// metrics package has one over Prometheus). Its methods are called from the
// partitions' workers, concurrently for different partitions, and must not
// block: each call sits on a worker's path between two Redis or Kafka round
// trips.
type Meter interface {
	// SinkRoundTrip is called after each call of the sink's Apply (one
	// ledger round trip for a batch of n records), whether it failed or not.
	SinkRoundTrip(p checkpoint.Partition, n int, d time.Duration, err error)
	// CommitRoundTrip is called after each commit attempt (the durability
	// barrier, if any, and the offset commit), whether it failed or not.
	CommitRoundTrip(p checkpoint.Partition, d time.Duration, err error)
	// Applied is called once per record whose effect this pipeline applied
	// (the sink reported Applied), with the record's timestamp: now minus
	// it is the record's age when its effect landed.
	Applied(p checkpoint.Partition, recordTime time.Time)
}

// roundTrip marks the partition busy in a Redis or Kafka call from now
// until the returned func runs (PartitionStats.BusySince), which records
// the call's error, if any, as the partition's last error.
func (w *worker) roundTrip() func(err error) time.Duration {
	start := time.Now()
	w.p.stats.update(w.part, func(s *PartitionStats) { s.BusySince = start })
	return func(err error) time.Duration {
		d := time.Since(start)
		w.p.stats.update(w.part, func(s *PartitionStats) {
			s.BusySince = time.Time{}
			if err != nil {
				s.LastError, s.LastErrorAt = err.Error(), time.Now()
			}
		})
		return d
	}
}
