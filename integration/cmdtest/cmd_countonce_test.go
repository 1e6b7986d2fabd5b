package cmdtest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/shardpipe/shardpipe/integration"
	"github.com/shardpipe/shardpipe/internal/harness/itest"
)

// TestCmdAppliedOnceAfterReset runs the binary on the real broker and
// Redis: a run applies 200 orders (summary applied 200); reset-offsets
// moves the group back to the start; the next run reads the 200 again and
// reports them suppressed, applied 0: each order counts as applied once
// over the group's life. status --redis shows the ledger's manifest.
func TestCmdAppliedOnceAfterReset(t *testing.T) {
	t.Parallel()
	const orders = 200
	brokers, addr := integration.Kafka(t), integration.Redis(t)
	bin := itest.BuildShardpipe(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	topic := integration.CreateTopic(t, brokers, 2)
	integration.CreateDeadLetterTopic(t, brokers, topic, 2)
	group := integration.Group(t)
	prod := integration.NewKafkaClient(t, brokers, kgo.DefaultProduceTopic(topic))
	var recs []*kgo.Record
	for i := range orders {
		recs = append(recs, &kgo.Record{Key: fmt.Appendf(nil, "order-%d", i), Value: []byte("{}")})
	}
	if err := prod.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	rdb := integration.NewRedisClient(t, addr)
	prefix := integration.RedisPrefix(t, rdb)
	pass := func() map[string]any {
		t.Helper()
		run := itest.Start(t, "run", bin, "run", "--brokers", strings.Join(brokers, ","), "--topic", topic, "--group", group,
			"--redis", addr, "--ledger-prefix", prefix+"l:", "--dlq-prefix", prefix+"own:", "--commit-interval", "100ms",
			"--report-interval", "100ms", "--log-format", "json")
		run.WaitLine(ctx, "progress", func(m map[string]any) bool {
			return itest.Num(m, "lag") == 0 && itest.Num(m, "applied")+itest.Num(m, "suppressed") >= orders
		})
		run.Signal(syscall.SIGTERM)
		s := run.WaitLine(ctx, "summary", func(map[string]any) bool { return true })
		if code := run.Wait(ctx); code != 0 {
			t.Fatalf("run: exit %d\n%s", code, run.Output())
		}
		return s
	}
	if s := pass(); itest.Num(s, "applied") != orders {
		t.Fatalf("first run: summary %v, want applied %d", s, orders)
	}
	// status shows the ledger's manifest the first run wrote.
	code, out := itest.RunCmd(ctx, bin, "status", "--brokers", strings.Join(brokers, ","), "--group", group, "--topic", topic,
		"--redis", addr, "--ledger-prefix", prefix+"l:", "--dlq-prefix", prefix+"own:", "--json")
	var st struct {
		Manifest *struct {
			Effect string `json:"effect"`
		} `json:"ledger_manifest"`
	}
	if err := json.Unmarshal([]byte(out), &st); code != 0 || err != nil || st.Manifest == nil || st.Manifest.Effect != "none" {
		t.Fatalf("status --redis --json: exit %d (%v), want the ledger manifest with effect none\n%s", code, err, out)
	}
	if code, out := itest.RunCmd(ctx, bin, "reset-offsets", "--brokers", strings.Join(brokers, ","), "--group", group,
		"--topic", topic, "--to", "earliest", "--redis", addr, "--ledger-prefix", prefix+"l:"); code != 0 {
		t.Fatalf("reset-offsets: exit %d\n%s", code, out)
	}
	if s := pass(); itest.Num(s, "applied") != 0 || itest.Num(s, "suppressed") != orders {
		t.Fatalf("run after reset-offsets: summary %v, want applied 0 and suppressed %d", s, orders)
	}
}
