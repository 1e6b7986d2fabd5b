package chaoscheck

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Decrease is a committed offset seen to go backwards.
type Decrease struct {
	Partition int32
	From, To  int64
	At        time.Time
}

// Watcher polls a group's committed offsets and remembers every decrease.
// Errors (a broker that is down, a coordinator that moved) are counted and
// tolerated: the next poll tries again, with a new client, so that it asks
// the seed brokers afresh where the group's coordinator is (a client keeps
// asking a killed coordinator while it does not answer at all). Polls
// counts what it saw: a watch that never read the topic's offsets proves
// nothing, and Verify says so.
type Watcher struct {
	adm     *kadm.Client
	cl      *kgo.Client // used and replaced by Run's goroutine only
	brokers []string
	group   string
	topic   string

	mu        sync.Mutex
	last      map[int32]int64
	decreases []Decrease
	polls     Polls
}

// Polls counts a Watcher's polls: made, failed (no answer, or an error for
// the group), and seen (answered with a committed offset of the topic).
type Polls struct {
	Made, Failed, Seen int
}

// NewWatcher returns a Watcher of group's commits on topic.
func NewWatcher(brokers []string, group, topic string) (*Watcher, error) {
	w := &Watcher{brokers: brokers, group: group, topic: topic, last: map[int32]int64{}}
	if err := w.connect(); err != nil {
		return nil, err
	}
	return w, nil
}

// connect replaces the watcher's client with a new one.
func (w *Watcher) connect() error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(w.brokers...), kgo.RequestRetries(1), kgo.RetryTimeout(time.Second))
	if err != nil {
		return err
	}
	if w.cl != nil {
		w.cl.Close()
	}
	w.cl, w.adm = cl, kadm.NewClient(cl)
	return nil
}

// Run polls every interval until ctx ends, then closes the client.
func (w *Watcher) Run(ctx context.Context, interval time.Duration) {
	defer func() { w.cl.Close() }()
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		w.poll(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func (w *Watcher) poll(ctx context.Context) {
	pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	resp, err := w.adm.FetchOffsets(pctx, w.group)
	w.mu.Lock()
	defer w.mu.Unlock()
	w.polls.Made++
	if err == nil {
		err = resp.Error()
	}
	if err != nil {
		w.polls.Failed++
		_ = w.connect() // the same settings succeeded in NewWatcher
		return
	}
	now := time.Now()
	seen := false
	defer func() {
		if seen {
			w.polls.Seen++
		}
	}()
	resp.Each(func(o kadm.OffsetResponse) {
		if o.Topic != w.topic || o.Err != nil || o.At < 0 {
			return
		}
		seen = true
		if prev, ok := w.last[o.Partition]; ok && o.At < prev {
			w.decreases = append(w.decreases, Decrease{Partition: o.Partition, From: prev, To: o.At, At: now})
		}
		w.last[o.Partition] = o.At
	})
}

// Decreases returns what the watcher saw go backwards, and its polls.
func (w *Watcher) Decreases() ([]Decrease, Polls) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]Decrease(nil), w.decreases...), w.polls
}

func (d Decrease) String() string {
	return fmt.Sprintf("partition %d committed offset went back from %d to %d at %s",
		d.Partition, d.From, d.To, d.At.UTC().Format(time.RFC3339Nano))
}

// Committed returns the group's committed offsets on topic (-1 when none).
func Committed(ctx context.Context, adm *kadm.Client, group, topic string) (map[int32]int64, error) {
	resp, err := adm.FetchOffsets(ctx, group)
	if err == nil {
		err = resp.Error()
	}
	if err != nil {
		return nil, fmt.Errorf("fetch offsets of group %s: %w", group, err)
	}
	out := map[int32]int64{}
	resp.Each(func(o kadm.OffsetResponse) {
		if o.Topic == topic {
			out[o.Partition] = o.At
		}
	})
	return out, nil
}
