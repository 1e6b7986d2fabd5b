package chaoscheck

import (
	"context"
	"encoding/binary"
	"fmt"
	"sort"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// offsetsTopic is Kafka's internal topic of group offsets and metadata.
const offsetsTopic = "__consumer_offsets"

// CommitHistory reads every offset commit of group for topic from Kafka's
// __consumer_offsets log, from its start to its end now, and returns the
// committed offsets per partition in log order: the group's commits as the
// brokers stored them, whatever a coordinator served at any moment. It
// decodes the documented record layout: a key of version 0 or 1 is (group,
// topic, partition), and the value (any version) begins with its version
// and the committed offset; a nil value (offsets deleted) is skipped.
func CommitHistory(ctx context.Context, brokers []string, group, topic string) (map[int32][]int64, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...))
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	ends, err := kadm.NewClient(cl).ListEndOffsets(ctx, offsetsTopic)
	if err != nil {
		return nil, fmt.Errorf("end offsets of %s: %w", offsetsTopic, err)
	}
	want := map[int32]int64{}
	ends.Each(func(o kadm.ListedOffset) {
		if o.Err == nil && o.Offset > 0 {
			want[o.Partition] = o.Offset
		}
	})
	start := map[string]map[int32]kgo.Offset{offsetsTopic: {}}
	for p := range want {
		start[offsetsTopic][p] = kgo.NewOffset().AtStart()
	}
	rd, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.ConsumePartitions(start),
		kgo.FetchIsolationLevel(kgo.ReadUncommitted()))
	if err != nil {
		return nil, err
	}
	defer rd.Close()
	type rec struct {
		at     int64
		offset int64
	}
	found := map[int32][]rec{}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	for len(want) > 0 {
		fs := rd.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("read %s: %w (%d partitions short of their end)", offsetsTopic, err, len(want))
		}
		fs.EachRecord(func(r *kgo.Record) {
			if end, ok := want[r.Partition]; ok && r.Offset+1 >= end {
				delete(want, r.Partition)
			}
			g, tp, part, ok := commitKey(r.Key)
			if !ok || g != group || tp != topic || len(r.Value) < 10 {
				return
			}
			found[part] = append(found[part], rec{at: r.Offset, offset: int64(binary.BigEndian.Uint64(r.Value[2:10]))})
		})
	}
	out := map[int32][]int64{}
	for p, rs := range found {
		// A group lives on one partition of the offsets topic, in log order.
		sort.Slice(rs, func(i, j int) bool { return rs[i].at < rs[j].at })
		for _, x := range rs {
			out[p] = append(out[p], x.offset)
		}
	}
	return out, nil
}

// commitKey decodes an offset commit key: version 0 or 1, then the group,
// the topic (each a 16-bit length and bytes) and the partition.
func commitKey(k []byte) (group, topic string, partition int32, ok bool) {
	if len(k) < 2 || binary.BigEndian.Uint16(k) > 1 {
		return "", "", 0, false
	}
	k = k[2:]
	str := func() (string, bool) {
		if len(k) < 2 {
			return "", false
		}
		n := int(binary.BigEndian.Uint16(k))
		if len(k) < 2+n {
			return "", false
		}
		s := string(k[2 : 2+n])
		k = k[2+n:]
		return s, true
	}
	var ok1, ok2 bool
	group, ok1 = str()
	topic, ok2 = str()
	if !ok1 || !ok2 || len(k) < 4 {
		return "", "", 0, false
	}
	return group, topic, int32(binary.BigEndian.Uint32(k)), true
}

// checkHistory fails every offset committed below the one before it, per
// partition, and returns how many there were.
func checkHistory(history map[int32][]int64, v *verdict) int {
	n := 0
	parts := make([]int32, 0, len(history))
	for p := range history {
		parts = append(parts, p)
	}
	sort.Slice(parts, func(i, j int) bool { return parts[i] < parts[j] })
	for _, p := range parts {
		hi := int64(-1)
		for _, o := range history[p] {
			if o < hi {
				n++
				v.fail("partition %d: offset %d committed after %d (the group's commit log in %s)", p, o, hi, offsetsTopic)
			}
			hi = max(hi, o)
		}
	}
	return n
}
