package chaos

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/shardpipe/shardpipe/internal/orders"
	"github.com/shardpipe/shardpipe/internal/topics"
)

// createTopics creates the source topic and its dead-letter topic and waits
// until the broker serves a leader for every partition of both, so the
// consumers' start-up checks find them.
func (r *runner) createTopics(ctx context.Context, adm *kadm.Client) error {
	for _, s := range []topics.Spec{{Name: r.topic, Partitions: int32(r.cfg.Partitions), Replication: r.cfg.replication()}, {Name: DLQTopic(r.topic), Partitions: 3, Replication: r.cfg.replication()}} {
		if _, err := topics.Create(ctx, adm, s); err != nil {
			return err
		}
	}
	return nil
}

// startProducer starts `shardpipe produce` at the rate that spreads the
// orders over cfg.Produce. It retries through broker restarts (a long
// delivery timeout).
func (r *runner) startProducer() (*exec.Cmd, <-chan error, error) {
	records := float64(r.cfg.Orders) * (1 + r.cfg.Duplicates)
	rate := int(math.Ceil(records / r.cfg.Produce.Seconds()))
	cmd, done, err := r.produce("produce", r.cfg.Orders, r.cfg.Duplicates, r.cfg.Seed, rate)
	if err == nil {
		r.logf("producing %.0f records (%d unique orders) at %d/s", records, r.cfg.Orders, rate)
	}
	return cmd, done, err
}

// tailRate is how fast feedTail sends: enough that every consumer holds
// landed, uncommitted records most of the time (commits come every 1s).
const tailRate = 20

// feedTail keeps the consumers busy while faults remain after production
// ended: when produced reports the end before faultsDone is closed, it
// starts `shardpipe produce` of new unique orders (another seed, so other
// order IDs, no re-sends) at tailRate and stops it with SIGTERM (it then
// waits for what it sent) once faultsDone is closed. A fault that meets an
// idle group tests nothing. It returns production's error and the tail's.
func (r *runner) feedTail(produced <-chan error, faultsDone <-chan struct{}) (stage, tailed <-chan error) {
	s, t := make(chan error, 1), make(chan error, 1)
	go func() {
		err := <-produced
		s <- err
		select {
		case <-faultsDone:
			t <- nil
			return
		default:
		}
		if err != nil {
			t <- nil
			return
		}
		cmd, done, err := r.produce("produce-tail", 1_000_000, 0, r.cfg.Seed+1, tailRate)
		if err != nil {
			t <- err
			return
		}
		r.logf("production ended before the faults: new orders at %d/s until they are done", tailRate)
		select {
		case <-faultsDone:
		case err := <-done: // it cannot run out; it failed
			t <- err
			return
		}
		_ = cmd.Process.Signal(syscall.SIGTERM)
		// Interrupted, produce exits 1 saying how many records were
		// acknowledged: that is the stop asked for. Whatever it wrote is in
		// the topic, and the checker reads the topic.
		if err := <-done; err != nil && !strings.Contains(tail(logPath(r, "produce-tail"), 3), "shardpipe: interrupted after") {
			t <- err
			return
		}
		t <- nil
	}()
	return s, t
}

// produce starts `shardpipe produce` of count orders (and dups re-sends)
// from seed at rate, logging to name-topic.log in the work directory.
func (r *runner) produce(name string, count int, dups float64, seed uint64, rate int) (*exec.Cmd, <-chan error, error) {
	f, err := os.Create(logPath(r, name))
	if err != nil {
		return nil, nil, err
	}
	cmd := exec.Command(r.cfg.Bin, "produce", "--brokers", strings.Join(r.cfg.brokers(), ","), "--topic", r.topic,
		"--count", strconv.Itoa(count), "--duplicates", strconv.FormatFloat(dups, 'f', -1, 64),
		"--partitions", strconv.Itoa(r.cfg.Partitions), "--seed", strconv.FormatUint(seed, 10),
		"--rate", strconv.Itoa(rate), "--delivery-timeout", "10m", "--connect-timeout", "1m")
	cmd.Env = cleanEnv()
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("start %s: %w", name, err)
	}
	done := make(chan error, 1)
	go func() {
		err := cmd.Wait()
		f.Close()
		if err != nil {
			err = fmt.Errorf("%s: %w; its log ends:\n%s", name, err, tail(f.Name(), 5))
		}
		done <- err
	}()
	return cmd, done, nil
}

func logPath(r *runner, name string) string {
	return filepath.Join(r.cfg.WorkDir, r.topic+"-"+name+".log")
}

// poisonRecord returns the i-th poison record: something `run` with
// --effect totals and the record key as business key cannot decode. Only
// the keyless one holds a well-formed order (orders.Order's JSON); the
// others' values are malformed on purpose, so they are written by hand.
func poisonRecord(seed uint64, i int) *kgo.Record {
	key := fmt.Sprintf("poison-%d-%03d", seed, i)
	switch i % 4 {
	case 0:
		return &kgo.Record{Key: []byte(key), Value: []byte("not json {" + key)}
	case 1:
		return &kgo.Record{Key: []byte(key), Value: fmt.Appendf(nil, `{"order_id":%q,"customer":"cust-001","amount_cents":"12.50"}`, key)}
	case 2:
		return &kgo.Record{Value: orders.Order{OrderID: key, Customer: "cust-001", AmountCents: 1250}.JSON()}
	default:
		return &kgo.Record{Key: []byte(key), Value: fmt.Appendf(nil, `{"order_id":%q,"amount_cents":1250}`, key)}
	}
}

// injectPoison writes cfg.Poison poison records at seeded moments over the
// production period; kgo retries through broker restarts.
func (r *runner) injectPoison(ctx context.Context, rng *rand.Rand) <-chan error {
	done := make(chan error, 1)
	if r.cfg.Poison == 0 {
		done <- nil
		return done
	}
	at := make([]time.Duration, r.cfg.Poison)
	for i := range at {
		at[i] = time.Duration(rng.Int64N(int64(r.cfg.Produce)))
	}
	go func() {
		done <- r.writePoison(ctx, at)
	}()
	return done
}

func (r *runner) writePoison(ctx context.Context, at []time.Duration) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(r.cfg.brokers()...), kgo.DefaultProduceTopic(r.topic),
		kgo.RecordDeliveryTimeout(10*time.Minute), kgo.AlwaysRetryEOF())
	if err != nil {
		return err
	}
	defer cl.Close()
	start := time.Now()
	for i, d := range sortedDurations(at) {
		if err := sleep(ctx, time.Until(start.Add(d))); err != nil {
			return err
		}
		if err := cl.ProduceSync(ctx, poisonRecord(r.cfg.Seed, i)).FirstErr(); err != nil {
			return fmt.Errorf("poison record %d: %w", i, err)
		}
	}
	return nil
}

func sortedDurations(ds []time.Duration) []time.Duration {
	out := slices.Clone(ds)
	slices.Sort(out)
	return out
}

// drain waits until the group's committed offset reaches the log end on
// every partition, restarting consumers that died on their own meanwhile.
func (r *runner) drain(ctx context.Context, adm *kadm.Client) error {
	deadline := time.Now().Add(r.cfg.DrainTimeout)
	lastLog := time.Now()
	for {
		if err := r.revive(); err != nil {
			return err
		}
		left, err := r.uncommitted(ctx, adm)
		if err == nil && left == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("chaos: the group did not commit to the log end within %v (%d records left, last error %v)",
				r.cfg.DrainTimeout, left, err)
		}
		if time.Since(lastLog) >= 10*time.Second {
			r.logf("draining: %d records not yet committed", left)
			lastLog = time.Now()
		}
		if err := sleep(ctx, 250*time.Millisecond); err != nil {
			return err
		}
	}
}

// uncommitted is the sum over partitions of log end minus committed offset.
func (r *runner) uncommitted(ctx context.Context, adm *kadm.Client) (int64, error) {
	lctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	ends, err := adm.ListEndOffsets(lctx, r.topic)
	if err != nil {
		return -1, err
	}
	resp, err := adm.FetchOffsets(lctx, r.group)
	if err == nil {
		err = resp.Error()
	}
	if err != nil {
		return -1, err
	}
	var left int64
	ends.Each(func(o kadm.ListedOffset) {
		c, ok := resp.Lookup(r.topic, o.Partition)
		committed := int64(0)
		if ok && c.At > 0 {
			committed = c.At
		}
		left += max(o.Offset-committed, 0)
	})
	return left, nil
}
