package integration_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/shardpipe/shardpipe/checkpoint"
	"github.com/shardpipe/shardpipe/integration"
	"github.com/shardpipe/shardpipe/pipeline"
	"github.com/shardpipe/shardpipe/sink"
)

// privateRedis is a redis-server process of this test alone, with AOF and
// fsync on every write (the README's production setting).
type privateRedis struct {
	bin, addr, dir string
	cmd            *exec.Cmd
	out            bytes.Buffer
}

func startPrivateRedis(t *testing.T) *privateRedis {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		if integration.Required() {
			t.Fatalf("redis-server not found: %v", err)
		}
		t.Skipf("redis-server not found: %v", err)
	}
	r := &privateRedis{bin: bin, addr: integration.ClosedAddr(t), dir: t.TempDir()}
	r.start(t)
	t.Cleanup(func() { r.kill() })
	return r
}

func (r *privateRedis) start(t *testing.T) {
	t.Helper()
	port := r.addr[strings.LastIndexByte(r.addr, ':')+1:]
	r.cmd = exec.Command(r.bin, "--port", port, "--bind", "127.0.0.1", "--dir", r.dir, "--save", "",
		"--appendonly", "yes", "--appendfsync", "always", "--daemonize", "no")
	r.out.Reset()
	r.cmd.Stdout, r.cmd.Stderr = &r.out, &r.out
	if err := r.cmd.Start(); err != nil {
		t.Fatalf("start redis-server: %v", err)
	}
	c := redis.NewClient(&redis.Options{Addr: r.addr, MaxRetries: -1})
	defer c.Close()
	deadline := time.Now().Add(20 * time.Second)
	for c.Ping(context.Background()).Err() != nil {
		if time.Now().After(deadline) {
			t.Fatalf("private redis-server on %s did not answer PING:\n%s", r.addr, r.out.String())
		}
		time.Sleep(20 * time.Millisecond) // poll interval: no event to wait on
	}
}

// kill SIGKILLs the server and waits for it to exit.
func (r *privateRedis) kill() {
	if r.cmd == nil || r.cmd.Process == nil {
		return
	}
	_ = r.cmd.Process.Signal(syscall.SIGKILL)
	_ = r.cmd.Wait()
	r.cmd = nil
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

// lineLog is a slog text handler's output, safe for concurrent use.
type lineLog struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *lineLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *lineLog) lines(msg string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, line := range strings.Split(l.buf.String(), "\n") {
		if strings.Contains(line, "msg=\""+msg+"\"") || strings.Contains(line, "msg="+msg+" ") {
			out = append(out, line)
		}
	}
	return out
}

// TestRedisOutage SIGKILLs the ledger's Redis (a private redis-server with
// appendonly yes, appendfsync always) while records wait to be applied. The
// affected partitions pause: no commit moves, this process stays below 20%
// of one core, the retry warning comes at most once per 5s per partition.
// When redis-server is started again on the same port the pipeline resumes by
// itself and every record lands with nothing applied twice.
//
// Not parallel: the CPU figure is this process's, so no other test may run.
func TestRedisOutage(t *testing.T) {
	const (
		partitions = 4
		half       = 1000 // unique keys per half
		dups       = 100  // re-sends per half
		window     = 4 * time.Second
	)
	brokers := integration.Kafka(t)
	rs := startPrivateRedis(t)
	topic := integration.CreateTopic(t, brokers, partitions)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	rdb := redis.NewClient(&redis.Options{Addr: rs.addr, ContextTimeoutEnabled: true})
	defer rdb.Close()
	ledger, err := sink.NewLedger(rdb, sink.WithPrefix("l:"))
	if err != nil {
		t.Fatal(err)
	}
	logs := &lineLog{}
	p, err := pipeline.New(pipeline.Brokers(brokers...), pipeline.Topics(topic), pipeline.Group(integration.Group(t)),
		pipeline.Sink(ledger), pipeline.CommitEvery(50), pipeline.CommitInterval(100*time.Millisecond),
		pipeline.MaxBatch(50), pipeline.Logger(slog.New(slog.NewTextHandler(logs, nil))))
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
	rs.kill()
	produceHalf(half)

	// Wait until the partitions are failing, then measure a window.
	for len(logs.lines("sink failed, retrying the batch; its offsets stay uncommitted")) == 0 {
		if ctx.Err() != nil {
			t.Fatalf("no retry warning after Redis died:\n%s", logs.buf.String())
		}
		time.Sleep(20 * time.Millisecond) // poll interval
	}
	warned := len(logs.lines("sink failed, retrying the batch; its offsets stay uncommitted"))
	cpu0, wall0 := cpuTime(t), time.Now()
	time.Sleep(window) // the measured outage itself: nothing to wait for
	cpu, wall := cpuTime(t)-cpu0, time.Since(wall0)
	share := float64(cpu) / float64(wall)
	warnings := logs.lines("sink failed, retrying the batch; its offsets stay uncommitted")
	t.Logf("redis down: this process used %v CPU in %v (%.1f%% of one core); %d retry warnings in the window over %d partitions",
		cpu.Round(time.Millisecond), wall.Round(time.Millisecond), 100*share, len(warnings)-warned, partitions)
	if share > 0.20 {
		t.Errorf("CPU while Redis is down: %.1f%% of one core, want below 20%%", 100*share)
	}
	perPart := map[string]int{}
	for _, l := range warnings[warned:] {
		i := strings.Index(l, "partition=")
		perPart[strings.Fields(l[i:])[0]]++
	}
	limit := int(window/(5*time.Second)) + 1
	for part, n := range perPart {
		if n > limit {
			t.Errorf("%s: %d retry warnings in %v, want at most %d (one per 5s)", part, n, window, limit)
		}
	}
	for _, s := range p.Stats() {
		if s.Committed != before[s.Partition] {
			t.Errorf("%s: committed %d while Redis was down, want it held at %d", s.Partition, s.Committed, before[s.Partition])
		}
	}

	rs.start(t)
	waitCommitted("after Redis came back", 2*(half+dups))
	if err := p.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	_, applied, suppressed, _, _ := pipeline.Totals(p.Stats())
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
