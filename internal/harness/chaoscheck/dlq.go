package chaoscheck

import (
	"bytes"
	"context"
	"fmt"
	"strconv"

	"github.com/twmb/franz-go/pkg/kgo"
)

// DLQ header names of the dead-letter contract.
const (
	HeaderError           = "shardpipe-error"
	HeaderSourceTopic     = "shardpipe-source-topic"
	HeaderSourcePartition = "shardpipe-source-partition"
	HeaderSourceOffset    = "shardpipe-source-offset"
	HeaderAttempts        = "shardpipe-attempts"
)

// DLQEntry is one dead-letter record: the source position its headers name,
// and whether its key and value are the source's.
type DLQEntry struct {
	At      Pos // in the DLQ topic
	Source  Pos
	Topic   string
	Key     []byte
	Value   []byte
	Problem string // a malformed entry: what is wrong with it
}

// ReadDLQ reads the dead-letter topic from its start to its current end.
func ReadDLQ(ctx context.Context, brokers []string, dlq string) ([]DLQEntry, error) {
	var out []DLQEntry
	_, err := consumeAll(ctx, brokers, dlq, func(r *kgo.Record) {
		out = append(out, dlqEntry(r))
	})
	return out, err
}

func dlqEntry(r *kgo.Record) DLQEntry {
	e := DLQEntry{At: Pos{r.Partition, r.Offset}, Key: r.Key, Value: r.Value}
	h := map[string]string{}
	for _, x := range r.Headers {
		if _, dup := h[x.Key]; !dup {
			h[x.Key] = string(x.Value)
		}
	}
	e.Topic = h[HeaderSourceTopic]
	p, perr := strconv.ParseInt(h[HeaderSourcePartition], 10, 32)
	o, oerr := strconv.ParseInt(h[HeaderSourceOffset], 10, 64)
	switch {
	case e.Topic == "":
		e.Problem = "no " + HeaderSourceTopic + " header"
	case perr != nil || oerr != nil:
		e.Problem = fmt.Sprintf("source partition %q / offset %q are not integers", h[HeaderSourcePartition], h[HeaderSourceOffset])
	case h[HeaderError] == "":
		e.Problem = "no " + HeaderError + " header"
	}
	e.Source = Pos{int32(p), o}
	return e
}

// checkDLQ matches the DLQ against the topic's poison records: each exactly
// once, with the source key and value, and nothing else from the topic.
func checkDLQ(t *Topic, entries []DLQEntry, v *verdict) {
	seen := map[Pos]int{}
	for _, e := range entries {
		if e.Topic != t.Name && e.Problem == "" {
			continue // another source topic's dead letter
		}
		if e.Problem != "" {
			v.fail("dlq record %s: %s", e.At, e.Problem)
			continue
		}
		p, ok := t.Poison[e.Source]
		if !ok {
			if id, good := t.Keys[e.Source]; good {
				v.fail("dlq record %s names %s, a good order %q", e.At, e.Source, id)
			} else {
				v.fail("dlq record %s names %s, which the topic does not hold", e.At, e.Source)
			}
			continue
		}
		if !bytes.Equal(p.Key, e.Key) || !bytes.Equal(p.Value, e.Value) {
			v.fail("dlq record %s: key/value differ from the source record %s", e.At, e.Source)
		}
		seen[e.Source]++
	}
	for at, p := range t.Poison {
		switch n := seen[at]; {
		case n == 0:
			v.lost++
			v.fail("poison record %s (%s) is not in the DLQ", at, p.Reason)
		case n > 1:
			v.doubled += n - 1
			v.fail("poison record %s is in the DLQ %d times", at, n)
		}
	}
	v.dlq = len(entries)
}
