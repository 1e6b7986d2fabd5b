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

// TestCmdStopWhileRedisDown: `shardpipe run` gets SIGTERM while its Redis (a
// private redis-server, SIGKILLed) is down and a batch is being retried. It
// must not wait out --shutdown-timeout and leave empty-handed: every
// partition commits what landed before the outage, logs what it left for
// replay (partition, committed offset, first offset left), and run exits 0
// well within the timeout.
func TestCmdStopWhileRedisDown(t *testing.T) {
	const (
		partitions = 2
		before     = 200 // records landed before the outage
		after      = 100 // records that cannot land
		shutdown   = 60 * time.Second
	)
	brokers := integration.Kafka(t)
	rs := itest.StartPrivateRedis(t)
	bin := itest.BuildShardpipe(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	topic := integration.CreateTopic(t, brokers, partitions)
	integration.CreateDeadLetterTopic(t, brokers, topic, partitions)
	group := integration.Group(t)
	prod := integration.NewKafkaClient(t, brokers, kgo.DefaultProduceTopic(topic))
	// ends[p] is the offset after partition p's last record so far.
	produce := func(from, n int) map[int32]int64 {
		ends := map[int32]int64{}
		for i := from; i < from+n; i++ {
			r, err := prod.ProduceSync(ctx, &kgo.Record{Key: fmt.Appendf(nil, "o-%d", i), Value: []byte("{}")}).First()
			if err != nil {
				t.Fatal(err)
			}
			ends[r.Partition] = max(ends[r.Partition], r.Offset+1)
		}
		return ends
	}
	landed := produce(0, before)
	run := itest.Start(t, "run", bin, "run", "--brokers", strings.Join(brokers, ","), "--topic", topic, "--group", group,
		"--redis", rs.Addr, "--ledger-prefix", "l:", "--commit-every", "0", "--commit-interval", "1h",
		"--shutdown-timeout", shutdown.String(), "--report-interval", "100ms", "--log-format", "json")
	// claimed: the effects this process performed (applied counts them only
	// once a commit moves past them, and --commit-interval 1h commits none).
	run.WaitLine(ctx, "progress", func(m map[string]any) bool { return itest.Num(m, "claimed") == before })
	rs.Kill()
	left := produce(before, after)
	run.WaitLine(ctx, "sink failed, retrying the batch; its offsets stay uncommitted", func(map[string]any) bool { return true })

	t0 := time.Now()
	run.Signal(syscall.SIGTERM)
	code := run.Wait(ctx)
	took := time.Since(t0)
	t.Logf("exit %d %v after SIGTERM with Redis down (--shutdown-timeout %v)", code, took.Round(time.Millisecond), shutdown)
	if code != 0 {
		t.Errorf("exit %d, want 0", code)
	}
	if took >= shutdown/2 {
		t.Errorf("took %v to stop, want well within --shutdown-timeout %v", took, shutdown)
	}

	offs, err := integration.NewAdmin(t, brokers).FetchOffsets(ctx, group)
	if err == nil {
		err = offs.Error()
	}
	if err != nil {
		t.Fatal(err)
	}
	for p := range int32(partitions) {
		got := int64(-1)
		if o, ok := offs.Lookup(topic, p); ok {
			got = o.At
		}
		if got != landed[p] {
			t.Errorf("partition %d: committed %d, want %d: every record landed before the outage", p, got, landed[p])
		}
	}
	// One line per partition left with records whose effects are unknown.
	lines := map[string]map[string]any{}
	for _, l := range strings.Split(run.Output(), "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(l), &m) == nil && m["msg"] == "stopped with records left for replay" {
			part, _ := m["partition"].(string)
			lines[part] = m
			t.Logf("%s", l)
		}
	}
	for p := range int32(partitions) {
		if _, some := left[p]; !some {
			continue
		}
		m := lines[fmt.Sprintf("%s/%d", topic, p)]
		if m == nil {
			t.Errorf("partition %d: no line saying what was left for replay:\n%s", p, run.Output())
			continue
		}
		if itest.Num(m, "committed") != landed[p] || itest.Num(m, "first_left") != landed[p] {
			t.Errorf("partition %d: left for replay from %d with %d committed, want both %d: %v",
				p, itest.Num(m, "first_left"), itest.Num(m, "committed"), landed[p], m)
		}
	}
}
