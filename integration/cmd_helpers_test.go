package integration_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/twmb/franz-go/pkg/kgo"
)

// buildShardpipe builds cmd/shardpipe into a temporary directory and returns
// the binary's path.
func buildShardpipe(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "shardpipe")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/shardpipe")
	cmd.Dir = ".."
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/shardpipe: %v\n%s", err, out)
	}
	return bin
}

// proc is a shardpipe process whose JSON log lines on stderr are parsed.
type proc struct {
	t     *testing.T
	name  string
	cmd   *exec.Cmd
	lines chan map[string]any // parsed JSON log lines
	done  chan struct{}       // closed when the process has exited
	code  int

	mu     sync.Mutex
	log    strings.Builder // stderr and stdout, as they arrive
	stdout strings.Builder // stdout alone, whole lines however stderr interleaves
}

// start runs bin with args; stderr lines are kept and, when JSON, parsed.
func start(t *testing.T, name, bin string, args ...string) *proc {
	t.Helper()
	return startEnv(t, name, bin, nil, args...)
}

// startEnv is start with env (KEY=VALUE) added to the environment.
func startEnv(t *testing.T, name, bin string, env []string, args ...string) *proc {
	t.Helper()
	p := &proc{t: t, name: name, cmd: exec.Command(bin, args...), lines: make(chan map[string]any, 100000),
		done: make(chan struct{})}
	p.cmd.Env = append(withoutShardpipeEnv(), env...)
	stderr, err := p.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	p.cmd.Stdout = lockedWriter{p} // stdout and the stderr reader below share p.log
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("%s: start: %v", name, err)
	}
	t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			_ = p.cmd.Process.Kill()
			<-p.done
		}
	})
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 64*1024), 1024*1024)
		for sc.Scan() {
			line := sc.Text()
			p.mu.Lock()
			p.log.WriteString(line + "\n")
			p.mu.Unlock()
			var m map[string]any
			if json.Unmarshal([]byte(line), &m) == nil {
				p.lines <- m
			}
		}
		err := p.cmd.Wait()
		p.code = p.cmd.ProcessState.ExitCode()
		if err != nil && p.code == 0 {
			p.code = -1
		}
		close(p.lines)
		close(p.done)
	}()
	return p
}

// withoutShardpipeEnv is the environment minus SHARDPIPE_* variables, so
// that only the flags a test passes count.
func withoutShardpipeEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "SHARDPIPE_") {
			env = append(env, kv)
		}
	}
	return env
}

// lockedWriter appends the process's stdout to its log and to its stdout
// under its mutex.
type lockedWriter struct{ p *proc }

func (w lockedWriter) Write(b []byte) (int, error) {
	w.p.mu.Lock()
	defer w.p.mu.Unlock()
	w.p.stdout.Write(b)
	return w.p.log.Write(b)
}

// stdoutText returns what the process wrote to stdout so far.
func (p *proc) stdoutText() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stdout.String()
}

func (p *proc) output() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.log.String()
}

// waitLine returns the first log line with message msg (any, when msg is
// "") for which cond holds.
func (p *proc) waitLine(ctx context.Context, msg string, cond func(map[string]any) bool) map[string]any {
	p.t.Helper()
	for {
		select {
		case m, ok := <-p.lines:
			if !ok {
				p.t.Fatalf("%s exited (code %d) before a %q line that holds:\n%s", p.name, p.code, msg, p.output())
			}
			if (msg == "" || m["msg"] == msg) && cond(m) {
				return m
			}
		case <-ctx.Done():
			p.t.Fatalf("%s: no %q line that holds: %v\n%s", p.name, msg, ctx.Err(), p.output())
		}
	}
}

// wait waits for the process to exit and returns its exit code.
func (p *proc) wait(ctx context.Context) int {
	p.t.Helper()
	select {
	case <-p.done:
		return p.code
	case <-ctx.Done():
		p.t.Fatalf("%s did not exit: %v\n%s", p.name, ctx.Err(), p.output())
		return -1
	}
}

// signal sends sig to the process.
func (p *proc) signal(sig syscall.Signal) {
	p.t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil {
		p.t.Fatalf("%s: signal %v: %v", p.name, sig, err)
	}
}

// num reads a number field of a JSON log line.
func num(m map[string]any, k string) int64 {
	f, _ := m[k].(float64)
	return int64(f)
}

// expected is what exactly-once processing of a topic must give, computed
// from the records themselves: the first record of each order ID counts.
type expected struct {
	records   int
	unique    int
	totals    map[string]int64
	firstSeen map[int32][]bool   // per partition, per offset: the record is its order's first
	keyAt     map[int32][]string // per partition, per offset: the record's order ID
}

// readTopic reads every record of topic (partitions) and computes expected.
func readTopic(ctx context.Context, t *testing.T, brokers []string, topic string, records int) expected {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	type po struct {
		p int32
		o int64
	}
	recs := map[po]*kgo.Record{}
	for len(recs) < records {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("read %d of %d records of %s: %v", len(recs), records, topic, ctx.Err())
		}
		fs.EachError(func(_ string, p int32, err error) { t.Fatalf("fetch %s/%d: %v", topic, p, err) })
		fs.EachRecord(func(r *kgo.Record) { recs[po{r.Partition, r.Offset}] = r })
	}
	exp := expected{records: len(recs), totals: map[string]int64{}, firstSeen: map[int32][]bool{},
		keyAt: map[int32][]string{}}
	seen := map[string]bool{}
	// Offsets in order per partition; an order ID lives on one partition.
	for key := range recs {
		if int64(len(exp.firstSeen[key.p])) <= key.o {
			grown := make([]bool, key.o+1)
			copy(grown, exp.firstSeen[key.p])
			exp.firstSeen[key.p] = grown
		}
	}
	for p, flags := range exp.firstSeen {
		for o := range flags {
			r := recs[po{p, int64(o)}]
			if r == nil {
				t.Fatalf("%s/%d: no record at offset %d", topic, p, o)
			}
			exp.keyAt[p] = append(exp.keyAt[p], string(r.Key))
			if seen[string(r.Key)] {
				continue
			}
			seen[string(r.Key)] = true
			flags[o] = true
			var v struct {
				Customer    string `json:"customer"`
				AmountCents int64  `json:"amount_cents"`
			}
			if err := json.Unmarshal(r.Value, &v); err != nil {
				t.Fatalf("%s/%d@%d: %v", topic, p, o, err)
			}
			exp.totals[v.Customer] += v.AmountCents
		}
	}
	exp.unique = len(seen)
	return exp
}

// uniqueBefore counts the orders whose first record lies before the given
// committed offsets.
func (e expected) uniqueBefore(committed map[int32]int64) int {
	n := 0
	for p, flags := range e.firstSeen {
		for o := int64(0); o < committed[p] && o < int64(len(flags)); o++ {
			if flags[o] {
				n++
			}
		}
	}
	return n
}

// rereadOutcome says what a consumer resuming at committed must do with the
// records past it, given the order IDs the ledger already holds: apply each
// order it meets first, suppress every other record (the ledger's orders and
// re-sends of orders met earlier in the range).
func (e expected) rereadOutcome(committed map[int32]int64, inLedger map[string]bool) (applied, suppressed int64) {
	met := map[string]bool{}
	for p, keys := range e.keyAt {
		for _, k := range keys[min(max(committed[p], 0), int64(len(keys))):] {
			if inLedger[k] || met[k] {
				suppressed++
				continue
			}
			met[k] = true
			applied++
		}
	}
	return applied, suppressed
}

// redisKeySet returns the keys matching prefix+match, less the prefix.
func redisKeySet(ctx context.Context, t *testing.T, rdb redis.UniversalClient, prefix, match string) map[string]bool {
	t.Helper()
	keys := map[string]bool{}
	it := rdb.Scan(ctx, 0, prefix+match, 1000).Iterator()
	for it.Next(ctx) {
		keys[strings.TrimPrefix(it.Val(), prefix)] = true
	}
	if err := it.Err(); err != nil {
		t.Fatalf("scan %s%s: %v", prefix, match, err)
	}
	return keys
}

// countKeys counts Redis keys matching pattern.
func countRedisKeys(ctx context.Context, t *testing.T, rdb redis.UniversalClient, pattern string) int {
	t.Helper()
	n := 0
	it := rdb.Scan(ctx, 0, pattern, 1000).Iterator()
	for it.Next(ctx) {
		n++
	}
	if err := it.Err(); err != nil {
		t.Fatalf("scan %s: %v", pattern, err)
	}
	return n
}

// checkTotals compares the totals hash with exp.
func checkTotals(ctx context.Context, t *testing.T, rdb redis.UniversalClient, hash string, exp expected) {
	t.Helper()
	got, err := rdb.HGetAll(ctx, hash).Result()
	if err != nil {
		t.Fatalf("HGETALL %s: %v", hash, err)
	}
	if len(got) != len(exp.totals) {
		t.Fatalf("totals hash has %d customers, want %d", len(got), len(exp.totals))
	}
	for cust, sum := range exp.totals {
		if got[cust] != strconv.FormatInt(sum, 10) {
			t.Fatalf("totals[%s] = %s, want %d (computed from the unique orders)", cust, got[cust], sum)
		}
	}
}

// statusJSON runs `shardpipe status --json` and returns its parsed output.
func statusJSON(ctx context.Context, t *testing.T, bin string, brokers []string, group, topic string) statusOut {
	t.Helper()
	cmd := exec.CommandContext(ctx, bin, "status", "--brokers", strings.Join(brokers, ","), "--group", group,
		"--topic", topic, "--json")
	cmd.Env = withoutShardpipeEnv()
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("status: %v\n%s", err, out)
	}
	var st statusOut
	if err := json.Unmarshal(out, &st); err != nil {
		t.Fatalf("status --json: %v\n%s", err, out)
	}
	return st
}

type statusOut struct {
	Lag        int64 `json:"lag"`
	Partitions []struct {
		Partition  int32 `json:"partition"`
		Committed  int64 `json:"committed"`
		LogEnd     int64 `json:"log_end"`
		LastStable int64 `json:"last_stable"`
		Lag        int64 `json:"lag"`
	} `json:"partitions"`
}

func (s statusOut) committed() map[int32]int64 {
	m := map[int32]int64{}
	for _, p := range s.Partitions {
		m[p.Partition] = p.Committed
	}
	return m
}

func (s statusOut) String() string { return fmt.Sprintf("%+v", s.Partitions) }
