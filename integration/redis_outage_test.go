package integration_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/shardpipe/shardpipe/checkpoint"
	"github.com/shardpipe/shardpipe/integration"
	"github.com/shardpipe/shardpipe/internal/harness/itest"
	"github.com/shardpipe/shardpipe/pipeline"
	"github.com/shardpipe/shardpipe/sink"
)

// TestPrivateRedisPortTaken: the private Redis helper survives a port
// taken between its pick and the bind. At the first start it picks
// another port; at a restart (the port is fixed: clients know it) it waits
// until the port is free again.
func TestPrivateRedisPortTaken(t *testing.T) {
	t.Parallel()
	r := itest.StartPrivateRedis(t)
	ping := func(addr string) error {
		c := redis.NewClient(&redis.Options{Addr: addr})
		defer c.Close()
		return c.Ping(context.Background()).Err()
	}

	// A restart whose port another process took meanwhile.
	r.Kill()
	ln, err := net.Listen("tcp", r.Addr)
	if err != nil {
		t.Fatalf("take the port %s: %v", r.Addr, err)
	}
	restarted := make(chan error, 1)
	go func() { restarted <- r.Restart() }()
	for r.BindFailures.Load() == 0 { // the restart met the taken port
		select {
		case err := <-restarted:
			t.Fatalf("the restart ended (%v) before the port was freed", err)
		case <-time.After(10 * time.Millisecond): // poll interval of a counter
		}
	}
	ln.Close()
	if err := <-restarted; err != nil {
		t.Fatalf("restart after the port was freed: %v", err)
	}
	if err := ping(r.Addr); err != nil {
		t.Fatalf("after the port was freed: %v", err)
	}

	// A first start on a port taken since it was picked.
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	r2 := &itest.PrivateRedis{Bin: r.Bin, Addr: taken.Addr().String(), Dir: t.TempDir()}
	t.Cleanup(func() { r2.Kill() })
	r2.StartFirst(t)
	if r2.Addr == taken.Addr().String() || r2.BindFailures.Load() != 1 {
		t.Fatalf("first start on a taken port: now on %s after %d bind failures; want another port after one", r2.Addr, r2.BindFailures.Load())
	}
	if err := ping(r2.Addr); err != nil {
		t.Fatal(err)
	}
}

// cpuTime returns this process's user plus system CPU time.
func cpuTime(t *testing.T) time.Duration {
	t.Helper()
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// lineLog is a slog JSON handler's output, safe for concurrent use.
type lineLog struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *lineLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

// retryWarning is one "sink failed, retrying the batch" log line.
type retryWarning struct {
	Time      time.Time `json:"time"`
	Partition string    `json:"partition"`
	Unlogged  int64     `json:"unlogged_retries"`
}

const retryMsg = "sink failed, retrying the batch; its offsets stay uncommitted"

// warnings returns the retry warnings logged so far, per partition, in order.
func (l *lineLog) warnings(t *testing.T) map[string][]retryWarning {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := map[string][]retryWarning{}
	for _, line := range strings.Split(l.buf.String(), "\n") {
		var m struct {
			Msg string `json:"msg"`
			retryWarning
		}
		if line == "" {
			continue
		}
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		if m.Msg == retryMsg {
			out[m.Partition] = append(out[m.Partition], m.retryWarning)
		}
	}
	return out
}

// failCounter counts, per partition, the batches its sink failed to apply.
type failCounter struct {
	next pipeline.Applier
	mu   sync.Mutex
	n    map[int32]int64
}

func (f *failCounter) Apply(ctx context.Context, batch []sink.Record) ([]sink.Result, error) {
	res, err := f.next.Apply(ctx, batch)
	if err != nil && len(batch) > 0 {
		f.mu.Lock()
		f.n[batch[0].Partition]++
		f.mu.Unlock()
	}
	return res, err
}

func (f *failCounter) failed(p int32) int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.n[p]
}

// TestRedisOutage SIGKILLs the ledger's Redis (a private redis-server with
// appendonly yes, appendfsync always) while records wait to be applied. The
// affected partitions pause: no commit moves, this process stays below 20%
// of one core. The sink retries Redis only briefly here, so a failed batch
// comes back within milliseconds and the pipeline's own backoff (100ms
// doubling to 5s) paces the retries: over a 12s window each partition
// retries many times but logs a warning at most once per 5s, at least
// twice, and the warnings' unlogged_retries count the retries in between.
// When redis-server is started again on the same port the pipeline resumes by
// itself and every record lands with nothing applied twice.
//
// Not parallel: the CPU figure is this process's, so no other test may run.
func TestRedisOutage(t *testing.T) {
	const (
		partitions = 4
		half       = 1000 // unique keys per half
		dups       = 100  // re-sends per half
		window     = 12 * time.Second
		every      = 5 * time.Second // the pipeline's least time between two warnings of a partition
	)
	brokers := integration.Kafka(t)
	rs := itest.StartPrivateRedis(t)
	topic := integration.CreateTopic(t, brokers, partitions)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	rdb := redis.NewClient(&redis.Options{Addr: rs.Addr, ContextTimeoutEnabled: true})
	defer rdb.Close()
	// Two quick attempts per Redis call: a failed batch returns at once, so
	// the warnings' pace is the pipeline's rate limit, not the sink's budget.
	ledger, err := sink.NewLedger(rdb, sink.WithPrefix("l:"),
		sink.WithRetry(sink.Backoff{Initial: 5 * time.Millisecond, Max: 10 * time.Millisecond, Attempts: 2}))
	if err != nil {
		t.Fatal(err)
	}
	fails := &failCounter{next: ledger, n: map[int32]int64{}}
	logs := &lineLog{}
	p, err := pipeline.New(pipeline.Brokers(brokers...), pipeline.Topics(topic), pipeline.Group(integration.Group(t)),
		pipeline.Sink(fails), pipeline.CommitEvery(50), pipeline.CommitInterval(100*time.Millisecond),
		pipeline.MaxBatch(50), pipeline.Logger(slog.New(slog.NewJSONHandler(logs, nil))))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	prod := integration.NewKafkaClient(t, brokers, kgo.DefaultProduceTopic(topic))
	produceHalf := func(base int) {
		var recs []*kgo.Record
		for i := range half + dups {
			k := base + i%half
			recs = append(recs, &kgo.Record{Key: fmt.Appendf(nil, "order-%d", k), Value: []byte(`{}`)})
		}
		if err := prod.ProduceSync(ctx, recs...).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	waitCommitted := func(what string, n int64) map[checkpoint.Partition]int64 {
		for {
			var sum int64
			committed := make(map[checkpoint.Partition]int64)
			for _, s := range p.Stats() {
				sum += max(s.Committed, 0)
				committed[s.Partition] = s.Committed
			}
			if sum == n {
				return committed
			}
			if ctx.Err() != nil {
				t.Fatalf("%s: %d of %d offsets committed: %v", what, sum, n, ctx.Err())
			}
			time.Sleep(20 * time.Millisecond) // poll interval: commits are observed through Stats
		}
	}

	produceHalf(0)
	before := waitCommitted("first half", half+dups)
	rs.Kill()
	produceHalf(half)

	// Wait until a partition is failing, then measure a window.
	for len(logs.warnings(t)) == 0 {
		if ctx.Err() != nil {
			t.Fatalf("no retry warning after Redis died:\n%s", logs.buf.String())
		}
		time.Sleep(20 * time.Millisecond) // poll interval
	}
	cpu0, wall0 := cpuTime(t), time.Now()
	time.Sleep(window) // the measured outage itself: nothing to wait for
	cpu, wall := cpuTime(t)-cpu0, time.Since(wall0)
	share := float64(cpu) / float64(wall)
	warnings := logs.warnings(t)
	t.Logf("redis down: this process used %v CPU in %v (%.1f%% of one core)", cpu.Round(time.Millisecond),
		wall.Round(time.Millisecond), 100*share)
	if share > 0.20 {
		t.Errorf("CPU while Redis is down: %.1f%% of one core, want below 20%%", 100*share)
	}
	if len(warnings) != partitions {
		t.Errorf("retry warnings for %d partitions, want all %d (each has records waiting)", len(warnings), partitions)
	}
	for part, ws := range warnings {
		n := int32(-1)
		if i := strings.LastIndexByte(part, '/'); i >= 0 {
			fmt.Sscan(part[i+1:], &n)
		}
		failed := fails.failed(n)
		var logged int64
		for i, w := range ws {
			logged += 1 + w.Unlogged
			if i > 0 {
				if gap := w.Time.Sub(ws[i-1].Time); gap < every-10*time.Millisecond {
					t.Errorf("%s: warnings %d and %d only %v apart, want at least %v", part, i, i+1, gap, every)
				}
			}
		}
		t.Logf("%s: %d failed batches, %d warnings, unlogged_retries %v", part, failed, len(ws), unlogged(ws))
		switch {
		case len(ws) < 2:
			t.Errorf("%s: %d retry warning(s) in %v of outage, want a second one", part, len(ws), window)
		case ws[1].Unlogged < 1:
			t.Errorf("%s: the second warning says unlogged_retries=%d; the retries between the two were not counted", part, ws[1].Unlogged)
		case logged > failed:
			t.Errorf("%s: warnings account for %d failed batches (each 1 + its unlogged_retries), but only %d failed", part, logged, failed)
		case failed <= int64(len(ws)):
			t.Errorf("%s: %d failed batches and %d warnings: the rate limit was never needed", part, failed, len(ws))
		}
	}
	for _, s := range p.Stats() {
		if s.Committed != before[s.Partition] {
			t.Errorf("%s: committed %d while Redis was down, want it held at %d", s.Partition, s.Committed, before[s.Partition])
		}
	}

	rs.Start(t)
	waitCommitted("after Redis came back", 2*(half+dups))
	if err := p.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	tot := pipeline.Totals(p.Stats())
	applied, suppressed := tot.Applied, tot.Suppressed
	keys, err := rdb.DBSize(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	if applied != 2*half || suppressed != 2*dups || keys != 2*half {
		t.Fatalf("after the outage: applied %d, suppressed %d, ledger keys %d; want %d, %d, %d",
			applied, suppressed, keys, 2*half, 2*dups, 2*half)
	}
	t.Logf("resumed by itself: applied %d, suppressed %d, %d ledger keys (AOF kept the first half)", applied, suppressed, keys)
}

func unlogged(ws []retryWarning) []int64 {
	out := make([]int64, len(ws))
	for i, w := range ws {
		out[i] = w.Unlogged
	}
	return out
}
