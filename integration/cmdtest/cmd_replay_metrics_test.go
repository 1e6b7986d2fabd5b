package cmdtest_test

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/shardpipe/shardpipe/integration"
	"github.com/shardpipe/shardpipe/internal/harness/itest"
)

// TestCmdReplayMetrics: `shardpipe replay --metrics-addr` serves the same
// series as run on its own address while it replays, passing promtool
// check metrics: the records it attempts, its ledger and commit round-trip
// histograms, the Kafka client's and the Redis pool's series.
func TestCmdReplayMetrics(t *testing.T) {
	const records = 400
	promtool := promtoolPath(t)
	brokers, addr := integration.Kafka(t), integration.Redis(t)
	bin := itest.BuildShardpipe(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	topic := integration.CreateTopic(t, brokers, 1)
	rdb := integration.NewRedisClient(t, addr)
	prefix := integration.RedisPrefix(t, rdb)
	prod := integration.NewKafkaClient(t, brokers, kgo.DefaultProduceTopic(topic))
	for i := range records {
		if err := prod.ProduceSync(ctx, &kgo.Record{Key: fmt.Appendf(nil, "o-%d", i), Value: []byte("{}")}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	// Paced at 100 records a second: the replay is still running when
	// its metrics are read.
	rep := itest.Start(t, "replay", bin, "replay", "--brokers", strings.Join(brokers, ","), "--topic", topic,
		"--id", integration.Group(t), "--from", "0", "--redis", addr, "--ledger-prefix", prefix+"l:",
		"--dlq-prefix", prefix+"own:", "--on-poison", "stop", "--rate", "100", "--commit-every", "10",
		"--metrics-addr", "127.0.0.1:0", "--log-format", "json")
	base := metricsAddr(ctx, rep)
	for {
		body, fams := scrapeMetrics(ctx, t, base)
		if sum(fams, "shardpipe_records_attempted_total") >= 50 && histCount(fams, "shardpipe_commit_round_trip_seconds") > 0 {
			check := exec.CommandContext(ctx, promtool, "check", "metrics")
			check.Stdin = strings.NewReader(body)
			if out, err := check.CombinedOutput(); err != nil {
				t.Errorf("promtool check metrics: %v\n%s", err, out)
			}
			if histCount(fams, "shardpipe_ledger_round_trip_seconds") == 0 || fams["shardpipe_kafka_fetch_records_total"] == nil ||
				fams["shardpipe_redis_pool_conns"] == nil {
				t.Errorf("replay metrics lack the ledger histogram, Kafka or Redis pool series:\n%s", body)
			}
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("replay metrics never showed 50 records and a commit:\n%s", body)
		}
		time.Sleep(100 * time.Millisecond)
	}
	rep.Signal(syscall.SIGTERM)
	rep.Wait(ctx)
}
