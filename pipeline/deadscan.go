package pipeline

import (
	"context"
	"errors"
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
// The reading goes in steps of at most ScanBound: a step that read records
// is followed by the next one from where it stopped, so a long window is
// read through however slowly; a step that read nothing fails with
// errScanStalled, naming the partition and how far the scan got (judgeDLQ:
// the pipeline stops). Every offset up to the end, control records
// included, is read.
func (d *deadLetters) find(ctx context.Context, topic string, part int32, since time.Time, r *sink.Record) (bool, error) {
	start, end, err := d.scanRange(ctx, topic, part, since)
	if err != nil || start >= end {
		return false, err
	}
	// Control records (commit and abort markers of a transactional writer
	// to the topic) are kept: the end offset may be one of them, and
	// without seeing it the scan would wait for a record that never comes.
	opts := append(append([]kgo.Opt{}, d.kopts...), kgo.SeedBrokers(d.seeds...), kgo.KeepControlRecords(),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {part: kgo.NewOffset().At(start)}}))
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return false, fmt.Errorf("dead-letter scan %s/%d: client: %w", topic, part, err)
	}
	defer cl.Close()
	want := [3]string{r.Topic, strconv.Itoa(int(r.Partition)), strconv.FormatInt(r.Offset, 10)}
	last := start - 1 // the last offset read
	for {
		stepFrom := last
		found, err := d.scanStep(ctx, cl, want, end, &last)
		switch {
		case found || last >= end-1:
			return found, nil
		case ctx.Err() != nil:
			return false, fmt.Errorf("dead-letter scan %s/%d: %w", topic, part, ctx.Err())
		case err != nil:
			return false, fmt.Errorf("dead-letter scan %s/%d: fetch: %w", topic, part, err)
		case last == stepFrom:
			return false, fmt.Errorf("dead-letter scan %s/%d: offsets %d..%d: %w: no record read for %v after offset %d",
				topic, part, start, end-1, errScanStalled, d.cfg.scanBound, last)
		}
	}
}

// scanRange returns the first offset of partition part written at or
// after since and the partition's end, each listed within ScanBound.
func (d *deadLetters) scanRange(ctx context.Context, topic string, part int32, since time.Time) (int64, int64, error) {
	ctx, cancel := context.WithTimeout(ctx, d.cfg.scanBound)
	defer cancel()
	adm := kadm.NewClient(d.cl)
	ends, err := adm.ListEndOffsets(ctx, topic)
	if err != nil {
		return 0, 0, fmt.Errorf("dead-letter scan %s/%d: end offsets: %w", topic, part, err)
	}
	end, ok := ends.Lookup(topic, part)
	if !ok || end.Err != nil {
		return 0, 0, fmt.Errorf("dead-letter scan %s/%d: end offset: %v", topic, part, end.Err)
	}
	starts, err := adm.ListOffsetsAfterMilli(ctx, since.UnixMilli(), topic)
	if err != nil {
		return 0, 0, fmt.Errorf("dead-letter scan %s/%d: offsets after %v: %w", topic, part, since, err)
	}
	start, ok := starts.Lookup(topic, part)
	if !ok || start.Err != nil {
		return 0, 0, fmt.Errorf("dead-letter scan %s/%d: start offset: %v", topic, part, start.Err)
	}
	return start.Offset, end.Offset, nil
}

// scanStep polls cl for at most ScanBound, until a record from want, the
// record before end, an error or ctx's end; *last is the last offset read.
func (d *deadLetters) scanStep(ctx context.Context, cl *kgo.Client, want [3]string, end int64, last *int64) (bool, error) {
	ctx, cancel := context.WithTimeout(ctx, d.cfg.scanBound)
	defer cancel()
	for {
		fs := cl.PollFetches(ctx)
		found := false
		fs.EachRecord(func(rec *kgo.Record) {
			*last = max(*last, rec.Offset)
			if !rec.Attrs.IsControl() && sourceOf(rec) == want {
				found = true
			}
		})
		if found || *last >= end-1 || ctx.Err() != nil {
			return found, nil
		}
		var ferr error
		fs.EachError(func(_ string, _ int32, err error) { ferr = err })
		if ferr != nil {
			return false, ferr
		}
	}
}

// errScanStalled: a dead-letter scan read nothing for a whole ScanBound.
var errScanStalled = errors.New("dead-letter scan stalled")

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
