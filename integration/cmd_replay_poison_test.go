package integration_test

import (
	"context"
	"regexp"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/shardpipe/shardpipe/integration"
)

// TestCmdReplayPoison runs `shardpipe replay` on the real servers over a
// range of 61 records whose offset 30 is a poison record (no key). With
// --on-poison stop it exits 1 and reports the partition stopped, reached
// 30: the offset before the poison record, though the records after it were
// read and applied. With --on-poison dlq (new ids, the range is the same) it
// dead-letters the record once and is done; a second id writes it no more.
func TestCmdReplayPoison(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	e := newReplayEnv(t, buildShardpipe(t), 1)
	e.produce(ctx, 30, 0, time.Now())
	cl := integration.NewKafkaClient(t, e.brokers, kgo.DefaultProduceTopic(e.topic))
	if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte(`{"customer":"c00","amount_cents":5}`)}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	e.produce(ctx, 30, 0, time.Now())
	tests := []struct {
		id, onPoison string
		code         int
		state        string
		reached      int64
		poison       int64 // dead-lettered now or found dead-lettered already
		dlq          int
	}{
		{"stop", "stop", 1, "stopped", 30, 0, 0},
		{"dlq-1", "dlq", 0, "done", 61, 1, 1},
		{"dlq-2", "dlq", 0, "done", 61, 1, 1}, // the marker is done: not written again, still counted as poison
	}
	for _, tc := range tests {
		p := start(t, "replay "+tc.id, e.bin, e.replayArgs(tc.id, "--from", "0", "--on-poison", tc.onPoison,
			"--poison-attempts", "1", "--max-batch", "100", "--commit-every", "100")...)
		code := p.wait(ctx)
		var line map[string]any
		for m := range p.lines {
			if m["msg"] == "replay partition" {
				line = m
			}
		}
		out := p.output()
		row := regexp.MustCompile(`(?m)^\s+0\s+0\s+61\s+0\s+(\d+)\s.*\s(\w+)\s*$`).FindStringSubmatch(p.stdoutText())
		if code != tc.code || line == nil || line["done"] != (tc.state == "done") || num(line, "reached") != tc.reached ||
			num(line, "poison") != tc.poison ||
			tc.state == "done" && num(line, "read") != num(line, "applied")+num(line, "suppressed")+num(line, "poison") ||
			row == nil || row[2] != tc.state {
			t.Fatalf("replay %s (--on-poison %s): exit %d, partition line %v, table row %q; want exit %d, reached %d, %d poison (read = applied + suppressed + poison when done), %s\n%s",
				tc.id, tc.onPoison, code, line, row, tc.code, tc.reached, tc.poison, tc.state, out)
		}
		if got := readDLQ(ctx, t, e.brokers, e.topic+".dlq"); len(got) != tc.dlq {
			t.Fatalf("after replay %s: the dead-letter topic holds %d records, want %d", tc.id, len(got), tc.dlq)
		}
	}
}
