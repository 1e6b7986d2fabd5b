package integration_test

import (
	"bufio"
	"context"
	"io"
	"net"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/shardpipe/shardpipe/integration"
	"github.com/shardpipe/shardpipe/internal/harness/itest"
)

// walkProc is a walkthrough command run in the background: its output
// lines (stdout and stderr) arrive on lines and are kept in out.
type walkProc struct {
	line  string
	cmd   *exec.Cmd
	lines chan string
	done  chan struct{} // closed once the process exited and its output was read
	err   error

	mu  sync.Mutex
	out strings.Builder
}

// startWalk runs line with bash from the repository's root, in the
// background (exec: the process signalled is the command itself).
func startWalk(t *testing.T, line string, env []string) *walkProc {
	t.Helper()
	w := &walkProc{line: line, cmd: exec.Command("bash", "-c", "exec "+line), lines: make(chan string, 10000), done: make(chan struct{})}
	w.cmd.Dir, w.cmd.Env = "..", env
	pr, pw := io.Pipe()
	w.cmd.Stdout, w.cmd.Stderr = pw, pw
	if err := w.cmd.Start(); err != nil {
		t.Fatalf("walkthrough: %s: %v", line, err)
	}
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			w.mu.Lock()
			w.out.WriteString(sc.Text() + "\n")
			w.mu.Unlock()
			select {
			case w.lines <- sc.Text():
			default: // nobody waits for so many lines
			}
		}
	}()
	go func() { w.err = w.cmd.Wait(); pw.Close(); close(w.done) }()
	t.Cleanup(func() { _ = w.cmd.Process.Kill(); <-w.done })
	return w
}

// output returns what the process wrote so far.
func (w *walkProc) output() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.out.String()
}

// await reads w's lines until cond holds for one; false when the process
// exited or ctx ended first.
func (w *walkProc) await(ctx context.Context, cond func(string) bool) bool {
	for {
		select {
		case l := <-w.lines:
			if cond(l) {
				return true
			}
		case <-w.done:
			return false
		case <-ctx.Done():
			return false
		}
	}
}

// exited waits for w to end and returns its exit error (nil: exit 0).
func (w *walkProc) exited(ctx context.Context, t *testing.T) error {
	t.Helper()
	select {
	case <-w.done:
		return w.err
	case <-ctx.Done():
		t.Fatalf("walkthrough: %s still runs: %v\n%s", w.line, ctx.Err(), w.output())
		return nil
	}
}

// logInt returns the integer of key=N in a text log line, -1 when absent.
func logInt(line, key string) int64 {
	for _, f := range strings.Fields(line) {
		if v, ok := strings.CutPrefix(f, key+"="); ok {
			if n, err := strconv.ParseInt(v, 10, 64); err == nil {
				return n
			}
		}
	}
	return -1
}

// progress says whether line is run's progress line with cond true of it.
func progress(cond func(line string) bool) func(string) bool {
	return func(l string) bool { return strings.Contains(l, "msg=progress") && cond(l) }
}

var produceSummary = regexp.MustCompile(`produce: (\d+) records to \S+ in \S+: (\d+) unique orders, \d+ duplicates; exactly-once totals: \d+ customers, (\d+) cents`)

// TestREADMEWalkthrough runs the shell commands of README.md's "Ten minutes
// on local servers", and of docs/getting-started.md's walkthrough at
// length, in order, as written, on the real servers: a unique topic, group
// and key prefix in place of orders, shardpipe and shardpipe:, the
// servers' addresses in place of the local ones. Commands with & run in the
// background, the next one once produce printed that it created the topic
// (as the README says); kill -KILL %2 comes once that run applied records
// while produce still writes; the run in the foreground runs in the
// background until produce ended and its progress line shows lag=0 (as the
// README says), and is stopped with SIGINT (Ctrl-C) at the end, exit 0.
// Every other command must exit 0 and show what its comment says: status
// lag 0 on every partition, one ledger entry per unique order, a ledger
// entry naming its record, the totals produce printed, replay's dry run and
// run applying 0. And, as both pages say, the records read again after the
// kill show up as suppressed: the restarted run's summary counts at least
// every ledger entry the killed one wrote past the offsets it had committed,
// and its redelivered count is exactly theirs.
func TestREADMEWalkthrough(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the README's walkthrough on the real servers: about a minute")
	}
	for _, page := range []string{"../README.md", "../docs/getting-started.md"} {
		t.Run(filepath.Base(page), func(t *testing.T) { walkthrough(t, page) })
	}
}

// walkthrough runs page's "Ten minutes on local servers" (TestREADMEWalkthrough).
func walkthrough(t *testing.T, page string) {
	brokers, addr := integration.Kafka(t), integration.Redis(t)
	rdb := integration.NewRedisClient(t, addr)
	prefix, topic, group := integration.RedisPrefix(t, rdb), integration.Topic(t), integration.Group(t)
	t.Cleanup(func() {
		_, _ = integration.NewAdmin(t, brokers).DeleteTopics(context.Background(), topic, topic+".dlq")
	})
	cmds, err := walkthroughCommands(page, "## Ten minutes on local servers")
	if err != nil {
		t.Fatal(err)
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "shardpipe")
	names := strings.NewReplacer("127.0.0.1:39092", strings.Join(brokers, ","), "redis-cli -p 36379", "redis-cli -h "+host+" -p "+port,
		"127.0.0.1:36379", addr, "./shardpipe ", bin+" ", "-o shardpipe ", "-o "+bin+" ", "shardpipe:", prefix)
	topicRe, groupRe := regexp.MustCompile(`--topic orders\b`), regexp.MustCompile(`--group shardpipe\b`)
	sub := func(l string) string {
		return groupRe.ReplaceAllString(topicRe.ReplaceAllString(names.Replace(l), "--topic "+topic), "--group "+group)
	}
	// The defaults the walkthrough relies on, under the test's prefix.
	env := append(itest.WithoutShardpipeEnv(), "SHARDPIPE_GROUP="+group, "SHARDPIPE_DLQ_PREFIX="+prefix,
		"SHARDPIPE_LEDGER_PREFIX="+prefix+"ledger:", "SHARDPIPE_TOTALS_HASH="+prefix+"totals",
		"SHARDPIPE_CHECKPOINT_PREFIX="+prefix+"replay:")
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	var jobs []*walkProc
	var produce, consumer *walkProc
	var killedAt time.Time
	var committedAtKill map[int32]int64 // the group's offsets once the killed run is gone
	var records, unique, cents, partitions int64
	for _, c := range cmds {
		line := sub(c.line)
		isRun := strings.Contains(c.line, "./shardpipe run ")
		switch {
		case strings.HasPrefix(c.line, "scripts/services.sh "), c.line == `eval "$(scripts/services.sh env)"`:
			t.Logf("skipped %q: the servers run already, and the test names them", c.line)
		case c.background:
			w := startWalk(t, line, env)
			jobs = append(jobs, w)
			if strings.Contains(c.line, "./shardpipe produce ") {
				produce = w
				partitions, _ = strconv.ParseInt(flagValue(c.line, "partitions"), 10, 64)
				// "Start run once produce has printed created topic orders."
				if !w.await(ctx, func(l string) bool { return strings.HasPrefix(l, "produce: created topic "+topic+" ") }) {
					t.Fatalf("%s printed no 'created topic' line:\n%s", line, w.output())
				}
			}
		case strings.HasPrefix(c.line, "kill -KILL %"):
			n, err := strconv.Atoi(strings.TrimPrefix(c.line, "kill -KILL %"))
			if err != nil || n < 1 || n > len(jobs) || produce == nil {
				t.Fatalf("%q: no such job (%d started) or no produce before it", c.line, len(jobs))
			}
			job := jobs[n-1]
			if !job.await(ctx, progress(func(l string) bool { return logInt(l, "applied") > 0 })) {
				t.Fatalf("%s: no progress line with records applied before the kill:\n%s", job.line, job.output())
			}
			select {
			case <-produce.done:
				t.Fatalf("produce ended before the kill: no longer mid-stream; the walkthrough's --rate is too high")
			default:
			}
			_ = job.cmd.Process.Signal(syscall.SIGKILL)
			_ = job.exited(ctx, t)
			killedAt, committedAtKill = time.Now(), groupOffsets(ctx, t, brokers, group, topic)
		case isRun: // the consumer in the foreground: left running
			consumer = startWalk(t, line, env)
			if produce == nil {
				t.Fatal("the foreground run comes before produce")
			}
			if err := produce.exited(ctx, t); err != nil {
				t.Fatalf("%s: %v\n%s", produce.line, err, produce.output())
			}
			m := produceSummary.FindStringSubmatch(produce.output())
			if m == nil {
				t.Fatalf("produce printed no summary:\n%s", produce.output())
			}
			records, _ = strconv.ParseInt(m[1], 10, 64)
			unique, _ = strconv.ParseInt(m[2], 10, 64)
			cents, _ = strconv.ParseInt(m[3], 10, 64)
			if !consumer.await(ctx, progress(func(l string) bool { return logInt(l, "lag") == 0 })) {
				t.Fatalf("%s: no progress line with lag=0:\n%s", line, consumer.output())
			}
		default:
			cmd := exec.CommandContext(ctx, "bash", "-c", line)
			cmd.Dir, cmd.Env = "..", env
			var stderr strings.Builder
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("%s: %v\n%s%s", line, err, out, stderr.String())
			}
			checkWalkOutput(t, c, string(out), walkFigures{topic, records, unique, cents, partitions})
		}
	}
	if consumer == nil {
		t.Fatal("the walkthrough runs no consumer in the foreground")
	}
	_ = consumer.cmd.Process.Signal(syscall.SIGINT) // "Stop run with Ctrl-C"
	if err := consumer.exited(ctx, t); err != nil {
		t.Fatalf("run after Ctrl-C: %v, want exit 0\n%s", err, consumer.output())
	}
	if committedAtKill == nil {
		t.Fatal("the walkthrough kills no run")
	}
	// "The records read again after the kill show up as suppressed."
	reread := claimsPastCommit(ctx, t, rdb, prefix+"ledger:", committedAtKill, killedAt)
	suppressed, redelivered := int64(-1), int64(-1)
	for _, l := range strings.Split(consumer.output(), "\n") {
		if strings.Contains(l, "msg=summary") {
			suppressed, redelivered = logInt(l, "suppressed"), logInt(l, "redelivered")
		}
	}
	t.Logf("killed with offsets %v committed and %d records applied past them; the restarted run suppressed %d, redelivered %d", committedAtKill, reread, suppressed, redelivered)
	if reread == 0 {
		t.Fatalf("the killed run applied nothing past its last commit: the kill came at no point that reads records again")
	}
	if suppressed < reread {
		t.Fatalf("the restarted run's summary says suppressed=%d, fewer than the %d records the killed run applied past its commit:\n%s",
			suppressed, reread, consumer.output())
	}
	// Exactly those are the ones met again for the same record: every
	// other suppressed record is a re-send of an order claimed already.
	if redelivered != reread {
		t.Fatalf("the restarted run's summary says redelivered=%d; the killed run applied %d records past its commit, each read again once:\n%s",
			redelivered, reread, consumer.output())
	}
}
