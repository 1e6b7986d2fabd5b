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

// Commit is one offset commit as the group's commit log holds it.
type Commit struct {
	Offset int64
	// Member is the commit's metadata: franz-go commits with its member
	// ID there, so it names the member (and so the process) that sent it;
	// "" when the value could not be decoded that far.
	Member string
	At     time.Time // the commit's timestamp, set by the coordinator; zero when not decoded
}

func (c Commit) String() string {
	return fmt.Sprintf("%d by member %q at %s", c.Offset, c.Member, c.At.UTC().Format("15:04:05.000"))
}

// CommitHistory is CommitLog's offsets alone.
func CommitHistory(ctx context.Context, brokers []string, group, topic string) (map[int32][]int64, error) {
	log, err := CommitLog(ctx, brokers, group, topic)
	if err != nil {
		return nil, err
	}
	out := map[int32][]int64{}
	for p, cs := range log {
		for _, c := range cs {
			out[p] = append(out[p], c.Offset)
		}
	}
	return out, nil
}

// CommitLog reads every offset commit of group for topic from Kafka's
// __consumer_offsets log, from its start to its end now, and returns them
// per partition in log order: the group's commits as the brokers stored
// them, whatever a coordinator served at any moment. It decodes the
// documented record layout: a key of version 0 or 1 is (group, topic,
// partition), and the value begins with its version and the committed
// offset, then (versions 0 to 4) the leader epoch from version 3 on, the
// metadata and the commit timestamp; a nil value (offsets deleted) is
// skipped.
func CommitLog(ctx context.Context, brokers []string, group, topic string) (map[int32][]Commit, error) {
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
		at int64
		c  Commit
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
			found[part] = append(found[part], rec{at: r.Offset, c: commitValue(r.Value)})
		})
	}
	out := map[int32][]Commit{}
	for p, rs := range found {
		// A group lives on one partition of the offsets topic, in log order.
		sort.Slice(rs, func(i, j int) bool { return rs[i].at < rs[j].at })
		for _, x := range rs {
			out[p] = append(out[p], x.c)
		}
	}
	return out, nil
}

// commitValue decodes an offset commit value (at least 10 bytes): its
// version and offset always; its metadata and timestamp for versions 0 to
// 4 (from 4 on, strings are compact: a uvarint of length+1).
func commitValue(v []byte) Commit {
	c := Commit{Offset: int64(binary.BigEndian.Uint64(v[2:10]))}
	version := binary.BigEndian.Uint16(v)
	b := v[10:]
	if version >= 3 {
		if len(b) < 4 {
			return c
		}
		b = b[4:] // leader epoch
	}
	var n int
	switch {
	case version <= 3:
		if len(b) < 2 {
			return c
		}
		n, b = int(int16(binary.BigEndian.Uint16(b))), b[2:]
	case version == 4:
		l, k := binary.Uvarint(b)
		if k <= 0 {
			return c
		}
		n, b = int(l)-1, b[k:]
	default:
		return c
	}
	if n > len(b) {
		return c
	}
	if n > 0 {
		c.Member, b = string(b[:n]), b[n:]
	}
	if len(b) >= 8 {
		c.At = time.UnixMilli(int64(binary.BigEndian.Uint64(b)))
	}
	return c
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
// partition, and returns how many there were. With log (the same commits
// with their members and times), each violation names who committed the
// higher offset and who the lower one, and when.
func checkHistory(history map[int32][]int64, log map[int32][]Commit, v *verdict) int {
	n := 0
	parts := make([]int32, 0, len(history))
	for p := range history {
		parts = append(parts, p)
	}
	sort.Slice(parts, func(i, j int) bool { return parts[i] < parts[j] })
	for _, p := range parts {
		hi, at := int64(-1), -1
		cs := log[p]
		for i, o := range history[p] {
			if o < hi {
				n++
				who := ""
				if len(cs) == len(history[p]) {
					who = fmt.Sprintf(": %s, then %s", cs[at], cs[i])
				}
				v.fail("partition %d: offset %d committed after %d (the group's commit log in %s)%s", p, o, hi, offsetsTopic, who)
			}
			if o >= hi {
				hi, at = o, i
			}
		}
	}
	return n
}

// loggedDecreases lists the decreases of history with their commits from
// log (none when log does not match history).
func loggedDecreases(history map[int32][]int64, log map[int32][]Commit) []LoggedDecrease {
	var out []LoggedDecrease
	for p, cs := range log {
		if len(cs) != len(history[p]) {
			continue
		}
		at := -1
		for i, c := range cs {
			if at >= 0 && c.Offset < cs[at].Offset {
				out = append(out, LoggedDecrease{Partition: p, Before: cs[at], After: c})
			}
			if at < 0 || c.Offset >= cs[at].Offset {
				at = i
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].After.At.Before(out[j].After.At) })
	return out
}
