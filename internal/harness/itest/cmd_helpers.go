package itest

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

// BuildShardpipe builds cmd/shardpipe into a temporary directory and returns
// the binary's path; tags are build tags (shardpipe_faults: the fault
// points of cmd/shardpipe/faultkill.go).
func BuildShardpipe(t *testing.T, tags ...string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "shardpipe")
	cmd := exec.Command("go", "build", "-tags", strings.Join(tags, ","), "-o", bin, "./cmd/shardpipe")
	cmd.Dir = RepoRoot(t)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/shardpipe: %v\n%s", err, out)
	}
	return bin
}

// Proc is a shardpipe process whose JSON log lines on stderr are parsed.
type Proc struct {
	T     *testing.T
	Name  string
	Cmd   *exec.Cmd
	Lines chan map[string]any // parsed JSON log lines
	Done  chan struct{}       // closed when the process has exited
	Code  int

	Mu     sync.Mutex
	Log    strings.Builder // stderr and stdout, as they arrive
	Stdout strings.Builder // stdout alone, whole lines however stderr interleaves
}

// Start runs bin with args; stderr lines are kept and, when JSON, parsed.
func Start(t *testing.T, name, bin string, args ...string) *Proc {
	t.Helper()
	return StartEnv(t, name, bin, nil, args...)
}

// StartEnv is start with env (KEY=VALUE) added to the environment.
func StartEnv(t *testing.T, name, bin string, env []string, args ...string) *Proc {
	t.Helper()
	p := &Proc{T: t, Name: name, Cmd: exec.Command(bin, args...), Lines: make(chan map[string]any, 100000),
		Done: make(chan struct{})}
	p.Cmd.Env = append(WithoutShardpipeEnv(), env...)
	stderr, err := p.Cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	p.Cmd.Stdout = LockedWriter{p} // stdout and the stderr reader below share p.log
	if err := p.Cmd.Start(); err != nil {
		t.Fatalf("%s: start: %v", name, err)
	}
	t.Cleanup(func() {
		select {
		case <-p.Done:
		default:
			_ = p.Cmd.Process.Kill()
			<-p.Done
		}
	})
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 64*1024), 1024*1024)
		for sc.Scan() {
			line := sc.Text()
			p.Mu.Lock()
			p.Log.WriteString(line + "\n")
			p.Mu.Unlock()
			var m map[string]any
			if json.Unmarshal([]byte(line), &m) == nil {
				p.Lines <- m
			}
		}
		err := p.Cmd.Wait()
		p.Code = p.Cmd.ProcessState.ExitCode()
		if err != nil && p.Code == 0 {
			p.Code = -1
		}
		close(p.Lines)
		close(p.Done)
	}()
	return p
}

// WithoutShardpipeEnv is the environment minus SHARDPIPE_* variables, so
// that only the flags a test passes count.
func WithoutShardpipeEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "SHARDPIPE_") {
			env = append(env, kv)
		}
	}
	return env
}

// LockedWriter appends the process's stdout to its log and to its stdout
// under its mutex.
type LockedWriter struct{ P *Proc }

func (w LockedWriter) Write(b []byte) (int, error) {
	w.P.Mu.Lock()
	defer w.P.Mu.Unlock()
	w.P.Stdout.Write(b)
	return w.P.Log.Write(b)
}

// StdoutText returns what the process wrote to stdout so far.
func (p *Proc) StdoutText() string {
	p.Mu.Lock()
	defer p.Mu.Unlock()
	return p.Stdout.String()
}

func (p *Proc) Output() string {
	p.Mu.Lock()
	defer p.Mu.Unlock()
	return p.Log.String()
}

// WaitLine returns the first log line with message msg (any, when msg is
// "") for which cond holds.
func (p *Proc) WaitLine(ctx context.Context, msg string, cond func(map[string]any) bool) map[string]any {
	p.T.Helper()
	for {
		select {
		case m, ok := <-p.Lines:
			if !ok {
				p.T.Fatalf("%s exited (code %d) before a %q line that holds:\n%s", p.Name, p.Code, msg, p.Output())
			}
			if (msg == "" || m["msg"] == msg) && cond(m) {
				return m
			}
		case <-ctx.Done():
			p.T.Fatalf("%s: no %q line that holds: %v\n%s", p.Name, msg, ctx.Err(), p.Output())
		}
	}
}

// Wait waits for the process to exit and returns its exit code.
func (p *Proc) Wait(ctx context.Context) int {
	p.T.Helper()
	select {
	case <-p.Done:
		return p.Code
	case <-ctx.Done():
		p.T.Fatalf("%s did not exit: %v\n%s", p.Name, ctx.Err(), p.Output())
		return -1
	}
}

// Signal sends sig to the process.
func (p *Proc) Signal(sig syscall.Signal) {
	p.T.Helper()
	if err := p.Cmd.Process.Signal(sig); err != nil {
		p.T.Fatalf("%s: signal %v: %v", p.Name, sig, err)
	}
}

// Num reads a number field of a JSON log line.
func Num(m map[string]any, k string) int64 {
	f, _ := m[k].(float64)
	return int64(f)
}

// Expected is what exactly-once processing of a topic must give, computed
// from the records themselves: the first record of each order ID counts.
type Expected struct {
	Records   int
	Unique    int
	Totals    map[string]int64
	FirstSeen map[int32][]bool   // per partition, per offset: the record is its order's first
	KeyAt     map[int32][]string // per partition, per offset: the record's order ID
}

// ReadTopic reads every record of topic (partitions) and computes expected.
func ReadTopic(ctx context.Context, t *testing.T, brokers []string, topic string, records int) Expected {
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
	exp := Expected{Records: len(recs), Totals: map[string]int64{}, FirstSeen: map[int32][]bool{},
		KeyAt: map[int32][]string{}}
	seen := map[string]bool{}
	// Offsets in order per partition; an order ID lives on one partition.
	for key := range recs {
		if int64(len(exp.FirstSeen[key.p])) <= key.o {
			grown := make([]bool, key.o+1)
			copy(grown, exp.FirstSeen[key.p])
			exp.FirstSeen[key.p] = grown
		}
	}
	for p, flags := range exp.FirstSeen {
		for o := range flags {
			r := recs[po{p, int64(o)}]
			if r == nil {
				t.Fatalf("%s/%d: no record at offset %d", topic, p, o)
			}
			exp.KeyAt[p] = append(exp.KeyAt[p], string(r.Key))
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
			exp.Totals[v.Customer] += v.AmountCents
		}
	}
	exp.Unique = len(seen)
	return exp
}

// UniqueBefore counts the orders whose first record lies before the given
// Committed offsets.
func (e Expected) UniqueBefore(committed map[int32]int64) int {
	n := 0
	for p, flags := range e.FirstSeen {
		for o := int64(0); o < committed[p] && o < int64(len(flags)); o++ {
			if flags[o] {
				n++
			}
		}
	}
	return n
}

// RereadOutcome says what a consumer resuming at committed must do with the
// Records past it, given the order IDs the ledger already holds: apply each
// Order it meets first, suppress every other record (the ledger's orders and
// re-sends of orders met earlier in the range).
func (e Expected) RereadOutcome(committed map[int32]int64, inLedger map[string]bool) (applied, suppressed int64) {
	met := map[string]bool{}
	for p, keys := range e.KeyAt {
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

// RedisKeySet returns the keys matching prefix+match, less the prefix.
func RedisKeySet(ctx context.Context, t *testing.T, rdb redis.UniversalClient, prefix, match string) map[string]bool {
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
func CountRedisKeys(ctx context.Context, t *testing.T, rdb redis.UniversalClient, pattern string) int {
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

// CheckTotals compares the totals hash with exp.
func CheckTotals(ctx context.Context, t *testing.T, rdb redis.UniversalClient, hash string, exp Expected) {
	t.Helper()
	got, err := rdb.HGetAll(ctx, hash).Result()
	if err != nil {
		t.Fatalf("HGETALL %s: %v", hash, err)
	}
	if len(got) != len(exp.Totals) {
		t.Fatalf("totals hash has %d customers, want %d", len(got), len(exp.Totals))
	}
	for cust, sum := range exp.Totals {
		if got[cust] != strconv.FormatInt(sum, 10) {
			t.Fatalf("totals[%s] = %s, want %d (computed from the unique orders)", cust, got[cust], sum)
		}
	}
}

// StatusJSON runs `shardpipe status --json` and returns its parsed output.
func StatusJSON(ctx context.Context, t *testing.T, bin string, brokers []string, group, topic string) StatusOut {
	t.Helper()
	cmd := exec.CommandContext(ctx, bin, "status", "--brokers", strings.Join(brokers, ","), "--group", group,
		"--topic", topic, "--json")
	cmd.Env = WithoutShardpipeEnv()
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("status: %v\n%s", err, out)
	}
	var st StatusOut
	if err := json.Unmarshal(out, &st); err != nil {
		t.Fatalf("status --json: %v\n%s", err, out)
	}
	return st
}

type StatusOut struct {
	Lag        int64 `json:"lag"`
	Partitions []struct {
		Partition  int32 `json:"partition"`
		Committed  int64 `json:"committed"`
		LogEnd     int64 `json:"log_end"`
		LastStable int64 `json:"last_stable"`
		Lag        int64 `json:"lag"`
	} `json:"partitions"`
}

func (s StatusOut) Committed() map[int32]int64 {
	m := map[int32]int64{}
	for _, p := range s.Partitions {
		m[p.Partition] = p.Committed
	}
	return m
}

func (s StatusOut) String() string { return fmt.Sprintf("%+v", s.Partitions) }
