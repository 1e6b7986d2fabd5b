package pipeline

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/shardpipe/shardpipe/sink"
)

// find reads partition part of the dead-letter topic from the first record
// written at or after since up to its end as of now, and reports whether a
// record there came from r (same source topic, partition and offset
// headers). It costs a ListOffsets, a ListEndOffsets and reading the
// records in between: the window since a lapsed claim, normally a few.
//
// A scan that has not reached the end within scanBound fails (the caller
// retries): a safety net, as every offset up to the end, control records
// included, is read.
func (d *deadLetters) find(ctx context.Context, topic string, part int32, since time.Time, r *sink.Record) (bool, error) {
	ctx, cancel := context.WithTimeout(ctx, scanBound)
	defer cancel()
	adm := kadm.NewClient(d.cl)
	ends, err := adm.ListEndOffsets(ctx, topic)
	if err != nil {
		return false, fmt.Errorf("dead-letter scan %s/%d: end offsets: %w", topic, part, err)
	}
	end, ok := ends.Lookup(topic, part)
	if !ok || end.Err != nil {
		return false, fmt.Errorf("dead-letter scan %s/%d: end offset: %v", topic, part, end.Err)
	}
	starts, err := adm.ListOffsetsAfterMilli(ctx, since.UnixMilli(), topic)
	if err != nil {
		return false, fmt.Errorf("dead-letter scan %s/%d: offsets after %v: %w", topic, part, since, err)
	}
	start, ok := starts.Lookup(topic, part)
	if !ok || start.Err != nil {
		return false, fmt.Errorf("dead-letter scan %s/%d: start offset: %v", topic, part, start.Err)
	}
	if start.Offset >= end.Offset {
		return false, nil
	}
	// Control records (commit and abort markers of a transactional writer
	// to the topic) are kept: the end offset may be one of them, and
	// without seeing it the scan would wait for a record that never comes.
	opts := append(append([]kgo.Opt{}, d.kopts...), kgo.SeedBrokers(d.seeds...), kgo.KeepControlRecords(),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {part: kgo.NewOffset().At(start.Offset)}}))
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return false, fmt.Errorf("dead-letter scan %s/%d: client: %w", topic, part, err)
	}
	defer cl.Close()
	want := [3]string{r.Topic, strconv.Itoa(int(r.Partition)), strconv.FormatInt(r.Offset, 10)}
	for {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			return false, fmt.Errorf("dead-letter scan %s/%d: %w", topic, part, err)
		}
		var ferr error
		fs.EachError(func(_ string, _ int32, err error) { ferr = err })
		if ferr != nil {
			return false, fmt.Errorf("dead-letter scan %s/%d: fetch: %w", topic, part, ferr)
		}
		found, last := false, int64(-1)
		fs.EachRecord(func(rec *kgo.Record) {
			last = max(last, rec.Offset)
			if !rec.Attrs.IsControl() && sourceOf(rec) == want {
				found = true
			}
		})
		if found {
			return true, nil
		}
		if last >= end.Offset-1 {
			return false, nil
		}
	}
}

// scanBound bounds one dead-letter scan.
const scanBound = time.Minute

// sourceOf returns the source topic, partition and offset headers of a
// dead-letter record.
func sourceOf(rec *kgo.Record) [3]string {
	var s [3]string
	for _, h := range rec.Headers {
		switch h.Key {
		case HeaderSourceTopic:
			s[0] = string(h.Value)
		case HeaderSourcePartition:
			s[1] = string(h.Value)
		case HeaderSourceOffset:
			s[2] = string(h.Value)
		}
	}
	return s
}
