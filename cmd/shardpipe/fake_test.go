package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/shardpipe/shardpipe/admin"
	"github.com/shardpipe/shardpipe/integration"
	"github.com/shardpipe/shardpipe/internal/orders"
)

// fakes starts kfake and miniredis for one test.
func fakes(t *testing.T) (broker, redisAddr string, mr *miniredis.Miniredis) {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	mr = miniredis.RunT(t)
	return c.ListenAddrs()[0], mr.Addr(), mr
}

// TestRunUnavailable: an unreachable broker, an unreachable Redis and a
// missing topic each give exit 3 and one line naming the problem, within the
// connect timeout.
func TestRunUnavailable(t *testing.T) {
	broker, redisAddr, _ := fakes(t)
	if code, _, stderr := call(t, nil, "produce", "--brokers", broker, "--topic", "orders", "--partitions", "2", "--count", "10"); code != 0 {
		t.Fatalf("produce: exit %d: %s", code, stderr)
	}
	dead, silent := integration.ClosedAddr(t), silentPort(t)
	tests := []struct {
		name, broker, redis, topic, want string
	}{
		{"silent broker", silent, redisAddr, "orders", "kafka " + silent + ": no broker answered within 2s"},
		{"silent redis", broker, silent, "orders", "redis " + silent + ": no answer to PING within 2s"},
		{"broker", dead, redisAddr, "orders", "kafka " + dead + ": cannot reach a broker"},
		{"redis", broker, dead, "orders", "redis " + dead + ": PING failed"},
		{"topic", broker, redisAddr, "nope", `kafka: topic "nope" does not exist`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start := time.Now()
			code, _, stderr := call(t, nil, "run", "--brokers", tt.broker, "--redis", tt.redis, "--topic", tt.topic,
				"--connect-timeout", "2s")
			if code != exitUnavailable {
				t.Fatalf("exit %d, want %d; stderr:\n%s", code, exitUnavailable, stderr)
			}
			lines := problemLines(stderr)
			if len(lines) != 1 || !strings.Contains(lines[0], tt.want) {
				t.Fatalf("stderr lines %q, want one containing %q", lines, tt.want)
			}
			if d := time.Since(start); d > 8*time.Second {
				t.Fatalf("took %v with --connect-timeout 2s", d)
			}
		})
	}
}

// silentPort returns 127.0.0.1:N where connections are accepted and never
// answered, for the whole test.
func silentPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var conns []net.Conn
	var mu sync.Mutex
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		_ = l.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			_ = c.Close()
		}
	})
	return l.Addr().String()
}

// lineWaiter is a log writer that signals when a line matches.
type lineWaiter struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	match func(string) bool
	hit   chan struct{}
	once  sync.Once
}

func (w *lineWaiter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	for _, l := range strings.Split(string(p), "\n") {
		if w.match(l) {
			w.once.Do(func() { close(w.hit) })
		}
	}
	return len(p), nil
}

func (w *lineWaiter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// TestRunProduceStatusOnFakes: produce orders with duplicates, run until the
// progress line shows lag 0, stop it as a signal would, and check the ledger,
// the totals and status against produce's own summary.
func TestRunProduceStatusOnFakes(t *testing.T) {
	broker, redisAddr, mr := fakes(t)
	summary := filepath.Join(t.TempDir(), "summary.json")
	code, _, stderr := call(t, nil, "produce", "--brokers", broker, "--topic", "orders", "--partitions", "3",
		"--count", "1000", "--duplicates", "0.2", "--seed", "5", "--summary-json", summary)
	if code != 0 {
		t.Fatalf("produce: exit %d: %s", code, stderr)
	}
	var sum orders.Summary
	b, err := os.ReadFile(summary)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &sum); err != nil {
		t.Fatal(err)
	}
	if sum.Records != 1200 || sum.Unique != 1000 || sum.Duplicates != 200 {
		t.Fatalf("summary %+v", sum)
	}

	logs := &lineWaiter{hit: make(chan struct{}), match: func(l string) bool {
		return strings.Contains(l, "msg=progress") && strings.Contains(l, " lag=0 ") && strings.Contains(l, " applied=1000 ")
	}}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan int, 1)
	go func() {
		done <- execute(ctx, []string{"shardpipe", "run", "--brokers", broker, "--redis", redisAddr, "--topic", "orders",
			"--group", "g", "--ledger-prefix", "l:", "--effect", "totals", "--totals-hash", "totals",
			"--commit-every", "50", "--commit-interval", "50ms", "--report-interval", "50ms",
			"--metrics-addr", "127.0.0.1:0"}, &bytes.Buffer{}, logs)
	}()
	select {
	case <-logs.hit:
	case code := <-done:
		t.Fatalf("run ended early with exit %d:\n%s", code, logs)
	case <-time.After(time.Minute):
		t.Fatalf("no progress line with lag=0 applied=1000 within a minute:\n%s", logs)
	}
	scrapeApplied(t, logs.String(), 1000)
	cancel() // what SIGTERM does through signal.NotifyContext
	if code := <-done; code != 0 {
		t.Fatalf("run: exit %d:\n%s", code, logs)
	}
	if !strings.Contains(logs.String(), "msg=summary attempts=1200 applied=1000 suppressed=200") {
		t.Fatalf("no final summary with the right counts:\n%s", logs)
	}
	var marks int // the group's commit marks, one per partition (pipeline.CountOnce)
	for _, k := range mr.Keys() {
		if strings.HasPrefix(k, "shardpipe:committed:") {
			marks++
		}
	}
	// ledger keys + the totals hash + the marks + the ledger's manifest
	if n := len(mr.Keys()); marks != 3 || n != 1000+1+marks+1 {
		t.Fatalf("redis holds %d keys, %d of them commit marks; want 1005: 1000 ledger keys, the totals hash, one mark per partition (3), the manifest", n, marks)
	}
	got, err := mr.HKeys("totals")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(sum.Totals) {
		t.Fatalf("totals has %d customers, want %d", len(got), len(sum.Totals))
	}
	for cust, want := range sum.Totals {
		if v := mr.HGet("totals", cust); v != strconv.FormatInt(want, 10) {
			t.Fatalf("totals[%s] = %s, want %d", cust, v, want)
		}
	}

	code, out, stderr := call(t, nil, "status", "--brokers", broker, "--group", "g", "--json")
	if code != 0 {
		t.Fatalf("status: exit %d: %s", code, stderr)
	}
	var st admin.GroupStatus
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		t.Fatalf("status --json: %v\n%s", err, out)
	}
	if st.Lag != 0 || len(st.Partitions) != 3 {
		t.Fatalf("status: lag %d over %d partitions, want 0 over 3:\n%s", st.Lag, len(st.Partitions), out)
	}
	for _, p := range st.Partitions {
		if p.Committed != p.LogEnd || int(p.LogEnd) != sum.Partitions[p.Partition] {
			t.Fatalf("partition %d: committed %d, log end %d, produced %d", p.Partition, p.Committed, p.LogEnd, sum.Partitions[p.Partition])
		}
	}
	code, out, _ = call(t, nil, "status", "--brokers", broker, "--group", "g", "--topic", "orders")
	if code != 0 || !strings.Contains(out, "TOPIC") || !strings.Contains(out, "group g ") {
		t.Fatalf("status table: exit %d:\n%s", code, out)
	}
	code, _, stderr = call(t, nil, "status", "--brokers", broker, "--group", "g", "--topic", "nope")
	if lines := problemLines(stderr); code != exitUnavailable || len(lines) != 1 || !strings.Contains(lines[0], `topic "nope" does not exist`) {
		t.Fatalf("status of a missing topic: exit %d, lines %q", code, lines)
	}
}

// TestStatusMissing: a group or topic that does not exist gives exit 3.
func TestStatusMissing(t *testing.T) {
	broker, _, _ := fakes(t)
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"group", []string{"--brokers", broker, "--group", "ghost"}, `group "ghost" does not exist`},
		{"broker", []string{"--brokers", integration.ClosedAddr(t), "--connect-timeout", "1s"}, "cannot reach a broker"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"status"}, tt.args...)
			code, _, stderr := call(t, nil, args...)
			if code != exitUnavailable {
				t.Fatalf("exit %d, want %d: %s", code, exitUnavailable, stderr)
			}
			if lines := problemLines(stderr); len(lines) != 1 || !strings.Contains(lines[0], tt.want) {
				t.Fatalf("stderr lines %q, want one containing %q", lines, tt.want)
			}
		})
	}
}

// TestProduceFromFile: JSON lines are produced verbatim, keyed by order_id;
// the summary counts re-sent IDs once; a bad line stops with its number.
func TestProduceFromFile(t *testing.T) {
	broker, _, _ := fakes(t)
	dir := t.TempDir()
	good := filepath.Join(dir, "orders.jsonl")
	lines := `{"order_id":"a","customer":"x","amount_cents":100}
{"order_id":"b","customer":"y","amount_cents":250}

{"order_id":"a","customer":"x","amount_cents":100}
{"order_id":7,"customer":"x","amount_cents":5}
`
	if err := os.WriteFile(good, []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, stderr := call(t, nil, "produce", "--brokers", broker, "--topic", "f", "--partitions", "2",
		"--from-file", good, "--summary-json", "-")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var sum orders.Summary
	if err := json.Unmarshal([]byte(out), &sum); err != nil {
		t.Fatalf("summary: %v\n%s", err, out)
	}
	if sum.Records != 4 || sum.Unique != 3 || sum.Duplicates != 1 || sum.Totals["x"] != 105 || sum.Totals["y"] != 250 {
		t.Fatalf("summary %+v", sum)
	}

	// A bad line is a usage error while nothing was sent; after records
	// were sent, the topic holds part of the file: a failure saying how much.
	bads := []struct {
		name, content string
		code          int
		want          string
	}{
		{"first line", "{\"customer\":\"x\"}\n{\"order_id\":\"a\"}\n", exitUsage,
			"bad.jsonl line 1: orders: bad line: no order_id"},
		{"after blank lines", "\n\n{\"customer\":\"x\"}\n", exitUsage, "bad.jsonl line 3: orders: bad line: no order_id"},
		{"after records", "{\"order_id\":\"a\"}\n{\"order_id\":\"b\"}\n\n{\"customer\":\"x\"}\n{\"order_id\":\"c\"}\n", exitFailure,
			"bad.jsonl line 4: orders: bad line: no order_id (a non-empty string or number); stopped at this line after sending 2 records (2 acknowledged)"},
	}
	for _, tt := range bads {
		t.Run(tt.name, func(t *testing.T) {
			bad := filepath.Join(t.TempDir(), "bad.jsonl")
			if err := os.WriteFile(bad, []byte(tt.content), 0o644); err != nil {
				t.Fatal(err)
			}
			code, _, stderr := call(t, nil, "produce", "--brokers", broker, "--topic", "f", "--from-file", bad)
			if lines := problemLines(stderr); code != tt.code || len(lines) != 1 || !strings.Contains(lines[0], tt.want) {
				t.Fatalf("exit %d, lines %q; want exit %d and one line containing %q", code, lines, tt.code, tt.want)
			}
		})
	}
}

// scrapeApplied finds run's metrics address in its logs, scrapes /metrics and
// checks that the applied counters add up to want.
func scrapeApplied(t *testing.T, logs string, want int) {
	t.Helper()
	m := regexp.MustCompile(`msg="serving Prometheus metrics" addr=(\S+)`).FindStringSubmatch(logs)
	if m == nil {
		t.Fatalf("no metrics address in the logs:\n%s", logs)
	}
	body := scrape(t, m[1])
	total := 0
	for _, line := range strings.Split(body, "\n") {
		if v, ok := strings.CutPrefix(line, "shardpipe_effects_applied_total{"); ok {
			n, err := strconv.Atoi(v[strings.LastIndex(v, " ")+1:])
			if err != nil {
				t.Fatalf("metric line %q: %v", line, err)
			}
			total += n
		}
	}
	if total != want {
		t.Fatalf("metrics say %d applied, want %d:\n%s", total, want, body)
	}
}
