package scenario

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Claim is a ledger entry as the scenarios read it back from Redis: the
// record whose attempt applied the business key (topic, partition, offset,
// and the epoch and member of that term) and the claim's state ("applied"
// for a Ledger, "done" for a Guard whose effect finished, "pending" for a
// Guard whose effect is not known to have landed). It is parsed from the
// documented JSON here, not with the sink's own decoder, so that a bug there
// cannot hide here.
type Claim struct {
	Topic     string `json:"topic"`     // the record's topic
	Partition int32  `json:"partition"` // the record's partition
	Offset    int64  `json:"offset"`    // the record's offset
	Epoch     int64  `json:"epoch"`     // the term's group generation or member epoch
	Member    string `json:"member"`    // the term's group member ID
	State     string `json:"state"`     // "applied", "done" or "pending"
}

// Ledger is what Redis holds under a ledger prefix.
type Ledger struct {
	// Claims maps each business key (the Redis key less the prefix) to its
	// claim.
	Claims map[string]Claim
	// Bad maps each business key whose value is not a claim to that value
	// (or to "unreadable: " and the error).
	Bad map[string]string
}

// ReadLedger reads every key under prefix (SCAN, then GET in pipelines of
// 1,000), leaving out the keys skip names (a scenario's totals hash or
// dead-letter markers; nil skips none). Keys that expire between the SCAN
// and the GET are left out. It costs a round trip per 1,000 keys, twice.
func ReadLedger(ctx context.Context, rdb redis.UniversalClient, prefix string, skip func(key string) bool) (Ledger, error) {
	l := Ledger{Claims: map[string]Claim{}, Bad: map[string]string{}}
	var keys []string
	it := rdb.Scan(ctx, 0, escapeGlob(prefix)+"*", 1000).Iterator()
	for it.Next(ctx) {
		if skip == nil || !skip(it.Val()) {
			keys = append(keys, it.Val())
		}
	}
	if err := it.Err(); err != nil {
		return l, fmt.Errorf("scan %s*: %w", prefix, err)
	}
	for len(keys) > 0 {
		chunk := keys[:min(len(keys), 1000)]
		keys = keys[len(chunk):]
		cmds := make([]*redis.StringCmd, len(chunk))
		_, err := rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			for i, k := range chunk {
				cmds[i] = p.Get(ctx, k)
			}
			return nil
		})
		if err != nil && err != redis.Nil {
			return l, fmt.Errorf("read ledger values under %s: %w", prefix, err)
		}
		for i, k := range chunk {
			v, err := cmds[i].Result()
			if err == redis.Nil {
				continue // expired or deleted since the scan
			}
			if err != nil {
				l.Bad[strings.TrimPrefix(k, prefix)] = "unreadable: " + err.Error()
				continue
			}
			var c Claim
			if json.Unmarshal([]byte(v), &c) != nil || c.State == "" {
				l.Bad[strings.TrimPrefix(k, prefix)] = v
				continue
			}
			l.Claims[strings.TrimPrefix(k, prefix)] = c
		}
	}
	return l, nil
}

// escapeGlob escapes SCAN MATCH's metacharacters in s.
func escapeGlob(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`*?[]\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// Pos is a record's place in its topic.
type Pos struct {
	Partition int32 // the record's partition
	Offset    int64 // the record's offset
}

// String prints p as partition@offset, "0@37".
func (p Pos) String() string { return fmt.Sprintf("%d@%d", p.Partition, p.Offset) }

// TopicKeys reads topic from its start to its end offsets as listed now and
// returns each record's key by position, and the end offsets by partition.
// The topic must hold no transaction markers (the scenarios' topics do not):
// a partition ending in one would never be read to its end. Each fetch waits
// at most 30 s; ctx bounds the whole read.
func TopicKeys(ctx context.Context, brokers []string, topic string, opts ...kgo.Opt) (map[Pos]string, map[int32]int64, error) {
	cl, err := kgo.NewClient(append(append([]kgo.Opt{}, opts...), kgo.SeedBrokers(brokers...))...)
	if err != nil {
		return nil, nil, err
	}
	defer cl.Close()
	listed, err := kadm.NewClient(cl).ListEndOffsets(ctx, topic)
	if err == nil {
		err = listed.Error()
	}
	if err != nil {
		return nil, nil, fmt.Errorf("end offsets of %s: %w", topic, err)
	}
	ends, from := map[int32]int64{}, map[int32]kgo.Offset{}
	listed.Each(func(o kadm.ListedOffset) {
		ends[o.Partition] = o.Offset
		if o.Offset > 0 {
			from[o.Partition] = kgo.NewOffset().AtStart()
		}
	})
	keys := map[Pos]string{}
	cl.AddConsumePartitions(map[string]map[int32]kgo.Offset{topic: from})
	for len(from) > 0 {
		fctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		fs := cl.PollFetches(fctx)
		cancel()
		if err := ctx.Err(); err != nil {
			return nil, nil, fmt.Errorf("read %s: %w", topic, err)
		}
		var ferr error
		fs.EachError(func(_ string, p int32, err error) { ferr = fmt.Errorf("read %s partition %d: %w", topic, p, err) })
		if ferr != nil {
			return nil, nil, ferr
		}
		fs.EachRecord(func(r *kgo.Record) {
			if r.Offset >= ends[r.Partition] {
				return
			}
			keys[Pos{r.Partition, r.Offset}] = string(r.Key)
			if r.Offset == ends[r.Partition]-1 {
				delete(from, r.Partition)
			}
		})
	}
	return keys, ends, nil
}
