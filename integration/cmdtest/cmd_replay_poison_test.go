package cmdtest_test

import (
	"context"
	"regexp"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/shardpipe/shardpipe/integration"
	"github.com/shardpipe/shardpipe/internal/harness/itest"
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
	e := itest.NewReplayEnv(t, itest.BuildShardpipe(t), 1)
	e.Produce(ctx, 30, 0, time.Now())
	cl := integration.NewKafkaClient(t, e.Brokers, kgo.DefaultProduceTopic(e.Topic))
	if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte(`{"customer":"c00","amount_cents":5}`)}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	e.Produce(ctx, 30, 0, time.Now())
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
		p := itest.Start(t, "replay "+tc.id, e.Bin, e.ReplayArgs(tc.id, "--from", "0", "--on-poison", tc.onPoison,
			"--poison-attempts", "1", "--max-batch", "100", "--commit-every", "100")...)
		code := p.Wait(ctx)
		var line map[string]any
		for m := range p.Lines {
			if m["msg"] == "replay partition" {
				line = m
			}
		}
		out := p.Output()
		row := regexp.MustCompile(`(?m)^\s+0\s+0\s+61\s+0\s+(\d+)\s.*\s(\w+)\s*$`).FindStringSubmatch(p.StdoutText())
		if code != tc.code || line == nil || line["done"] != (tc.state == "done") || itest.Num(line, "reached") != tc.reached ||
			itest.Num(line, "poison") != tc.poison ||
			tc.state == "done" && itest.Num(line, "read") != itest.Num(line, "applied")+itest.Num(line, "suppressed")+itest.Num(line, "poison") ||
			row == nil || row[2] != tc.state {
			t.Fatalf("replay %s (--on-poison %s): exit %d, partition line %v, table row %q; want exit %d, reached %d, %d poison (read = applied + suppressed + poison when done), %s\n%s",
				tc.id, tc.onPoison, code, line, row, tc.code, tc.reached, tc.poison, tc.state, out)
		}
		if got := itest.ReadDLQ(ctx, t, e.Brokers, e.Topic+".dlq"); len(got) != tc.dlq {
			t.Fatalf("after replay %s: the dead-letter topic holds %d records, want %d", tc.id, len(got), tc.dlq)
		}
	}
}
