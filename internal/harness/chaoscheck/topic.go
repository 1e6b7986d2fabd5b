package chaoscheck

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Pos is a record's place in a topic.
type Pos struct {
	Partition int32
	Offset    int64
}

func (p Pos) String() string { return fmt.Sprintf("%d@%d", p.Partition, p.Offset) }

// Order is the first record of an order ID in the topic.
type Order struct {
	ID       string
	Customer string
	Amount   int64
	Value    []byte
	At       Pos
}

// Poison is a record shardpipe must refuse and send to the DLQ.
type Poison struct {
	At     Pos
	Key    []byte
	Value  []byte
	Reason string
}

// Topic is what the source topic holds, as the checker reads it.
type Topic struct {
	Name string
	// Opaque: the values are not read (guard mode's HTTP effect sends them
	// as they are), so only a keyless record is poison.
	Opaque    bool
	Records   int
	Orders    map[string]Order // order ID -> first occurrence
	Resends   int              // records repeating an earlier order ID
	Conflicts []string         // re-sends whose value differs from the first
	Poison    map[Pos]Poison   // poison records by position
	Keys      map[Pos]string   // position -> order ID of every good record
	End       map[int32]int64  // log end offset per partition
}

// classify reads one record the way the documented contract says shardpipe
// reads it with --key-from key and --effect totals (customer and
// amount_cents). It returns the order, or a reason it is poison.
func classify(key, value []byte) (Order, string) {
	if len(key) == 0 {
		return Order{}, "empty key"
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(value, &m); err != nil || m == nil {
		return Order{}, "value is not a JSON object"
	}
	cust, ok := scalar(m["customer"])
	if !ok || cust == "" {
		return Order{}, "no customer"
	}
	amount, err := strconv.ParseInt(string(bytes.TrimSpace(m["amount_cents"])), 10, 64)
	if err != nil {
		return Order{}, "amount_cents is not an int64"
	}
	return Order{ID: string(key), Customer: cust, Amount: amount, Value: value}, ""
}

// scalar returns a JSON string's text, or a number as written.
func scalar(raw json.RawMessage) (string, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "", false
	}
	if raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return "", false
		}
		return s, true
	}
	var n json.Number
	if json.Unmarshal(raw, &n) != nil {
		return "", false
	}
	return n.String(), true
}

// add files one record into t.
func (t *Topic) add(at Pos, key, value []byte) {
	t.Records++
	o, reason := classify(key, value)
	if t.Opaque {
		o, reason = Order{ID: string(key), Value: value}, ""
		if len(key) == 0 {
			reason = "empty key"
		}
	}
	if reason != "" {
		t.Poison[at] = Poison{At: at, Key: key, Value: value, Reason: reason}
		return
	}
	o.At = at
	t.Keys[at] = o.ID
	if first, ok := t.Orders[o.ID]; ok {
		t.Resends++
		if !bytes.Equal(first.Value, o.Value) {
			t.Conflicts = append(t.Conflicts, fmt.Sprintf("order %q at %s differs from its first record at %s", o.ID, at, first.At))
		}
		return
	}
	t.Orders[o.ID] = o
}

func newTopic(name string) *Topic {
	return &Topic{Name: name, Orders: map[string]Order{}, Poison: map[Pos]Poison{}, Keys: map[Pos]string{},
		End: map[int32]int64{}}
}

// consumeAll calls fn for every record of topic from the start to the log
// end offsets as listed now, and returns those end offsets.
func consumeAll(ctx context.Context, brokers []string, topic string, fn func(*kgo.Record)) (map[int32]int64, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...))
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	ends, err := kadm.NewClient(cl).ListEndOffsets(ctx, topic)
	if err != nil {
		return nil, fmt.Errorf("list end offsets of %s: %w", topic, err)
	}
	end := map[int32]int64{}
	want := map[int32]kgo.Offset{}
	var werr error
	ends.Each(func(o kadm.ListedOffset) {
		if o.Err != nil {
			werr = fmt.Errorf("end offset of %s partition %d: %w", topic, o.Partition, o.Err)
		}
		end[o.Partition] = o.Offset
		if o.Offset > 0 {
			want[o.Partition] = kgo.NewOffset().AtStart()
		}
	})
	if werr != nil {
		return nil, werr
	}
	if len(end) == 0 {
		return nil, fmt.Errorf("topic %s: no partitions (does it exist?)", topic)
	}
	cl.AddConsumePartitions(map[string]map[int32]kgo.Offset{topic: want})
	left := len(want)
	done := map[int32]bool{}
	for left > 0 {
		fctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		fs := cl.PollFetches(fctx)
		cancel()
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if fs.IsClientClosed() {
			return nil, kgo.ErrClientClosed
		}
		var ferr error
		fs.EachError(func(_ string, p int32, err error) { ferr = fmt.Errorf("fetch %s partition %d: %w", topic, p, err) })
		if ferr != nil {
			return nil, ferr
		}
		fs.EachRecord(func(r *kgo.Record) {
			if r.Offset >= end[r.Partition] {
				return
			}
			fn(r)
			if r.Offset == end[r.Partition]-1 && !done[r.Partition] {
				done[r.Partition] = true
				left--
			}
		})
	}
	return end, nil
}

// ReadTopic reads topic from its start to its current end and classifies
// every record as `run --effect totals` reads it.
func ReadTopic(ctx context.Context, brokers []string, topic string) (*Topic, error) {
	return readTopic(ctx, brokers, topic, false)
}

// readTopic is ReadTopic; opaque classifies as guard mode's HTTP effect
// reads records (only a keyless one is poison).
func readTopic(ctx context.Context, brokers []string, topic string, opaque bool) (*Topic, error) {
	t := newTopic(topic)
	t.Opaque = opaque
	end, err := consumeAll(ctx, brokers, topic, func(r *kgo.Record) {
		t.add(Pos{r.Partition, r.Offset}, r.Key, r.Value)
	})
	if err != nil {
		return nil, err
	}
	t.End = end
	return t, nil
}
