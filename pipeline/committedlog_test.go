package pipeline_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/shardpipe/shardpipe/pipeline"
	"github.com/shardpipe/shardpipe/sink"
)

// signalBuffer keeps log output and closes seen at the first line holding
// want.
type signalBuffer struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	want string
	seen chan struct{}
}

func (b *signalBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.buf.Write(p); b.seen != nil && strings.Contains(b.buf.String(), b.want) {
		close(b.seen)
		b.seen = nil
	}
	return len(p), nil
}

func (b *signalBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestRetryWarningNamesCommitted: a retry warning before the first commit
// of a term names the offset the group had committed, where the term
// started, not -1.
func TestRetryWarningNamesCommitted(t *testing.T) {
	env := newFake(t, "orders", 1)
	var rs []*kgo.Record
	for i := range 30 {
		rs = append(rs, &kgo.Record{Topic: "orders", Key: []byte(fmt.Sprintf("order-%d", i)), Value: []byte("{}")})
	}
	produce(t, env.brokers, rs...)
	cl, err := kgo.NewClient(kgo.SeedBrokers(env.brokers...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var offs kadm.Offsets
	offs.AddOffset("orders", 0, 20, -1)
	if err := kadm.NewClient(cl).CommitAllOffsets(context.Background(), "g", offs); err != nil {
		t.Fatal(err)
	}
	env.mr.SetError("LOADING Redis is loading the dataset in memory")
	ledger, err := sink.NewLedger(env.rc, sink.WithRetry(sink.Backoff{Initial: time.Millisecond, Max: 2 * time.Millisecond, Attempts: 2}))
	if err != nil {
		t.Fatal(err)
	}
	out := &signalBuffer{want: "sink failed, retrying the batch", seen: make(chan struct{})}
	seen := out.seen
	r := start(t, env.brokers, ledger, pipeline.Logger(slog.New(slog.NewTextHandler(out, nil))))
	select {
	case <-seen:
	case <-r.ctx.Done():
		t.Fatalf("no retry warning:\n%s", out)
	}
	line := out.String()
	line = line[strings.Index(line, "sink failed, retrying the batch"):]
	line, _, _ = strings.Cut(line, "\n")
	if !strings.Contains(line, " committed=20 ") || !strings.Contains(line, " first_offset=20 ") {
		t.Fatalf("retry warning %q: want committed=20 (the group's offset) before the term's first commit", line)
	}
	env.mr.SetError("")
	if err := r.p.Close(r.ctx); err != nil {
		t.Fatal(err)
	}
}
