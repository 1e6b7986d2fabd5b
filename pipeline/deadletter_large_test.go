package pipeline_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/shardpipe/shardpipe/pipeline"
	"github.com/shardpipe/shardpipe/sink"
)

// logLines collects a JSON logger's lines.
type logLines struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logLines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logLines) lines() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Split(strings.TrimSuffix(l.b.String(), "\n"), "\n")
}

// bigKey returns n bytes that are mostly no printable text, so that %q
// makes them about three times as long.
func bigKey(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i)
	}
	return b
}

// TestDeadLetterLargeKeyText: a poison record with a 60,000-byte binary key
// is dead-lettered with its whole key, but the shardpipe-error header and
// the dead-letter log line name the key by a prefix, its length and a
// short hash, within 1 KiB (before: the key quoted whole, once by the
// ledger, twice in guard mode, about three times its size each). In ledger
// mode no log line quotes it whole either.
func TestDeadLetterLargeKeyText(t *testing.T) {
	key := bigKey(60000)
	sum := sha256.Sum256(key)
	named := fmt.Sprintf("(%d bytes, sha256 %x)", len(key), sum[:4])
	for _, tc := range []struct {
		name  string
		sink  func(t *testing.T, env fakeEnv, log *slog.Logger) pipeline.Applier
		value string // of the poison record
		opts  []pipeline.GroupOpt
		// named: the header names the key by length and hash; allLogs:
		// every log line is bounded, not just the dead-letter one.
		named, allLogs bool
	}{
		{"ledger, value without amount", func(t *testing.T, env fakeEnv, _ *slog.Logger) pipeline.Applier {
			return totalsLedger(t, env.rc)
		}, `{"customer":"c1"}`, []pipeline.GroupOpt{pipeline.PoisonAttempts(1)}, true, true},
		{"guard, effect refusing the key", func(t *testing.T, env fakeEnv, log *slog.Logger) pipeline.Applier {
			g, err := sink.NewGuard(env.rc, sink.WithPrefix("g:"), sink.WithLogger(log))
			if err != nil {
				t.Fatal(err)
			}
			return pipeline.Guarded(g, func(_ context.Context, k string, _ *sink.Record) error {
				if len(k) > 100 {
					return errors.New("the receiver refuses the key")
				}
				return nil
			})
		}, `{}`, []pipeline.GroupOpt{pipeline.MaxInFlight(2), pipeline.EffectAttempts(2)}, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := dlqEnv(t)
			var out logLines
			log := slog.New(slog.NewJSONHandler(&out, nil))
			// A good record first: the partition has a success before its poison record.
			produce(t, env.brokers,
				&kgo.Record{Topic: "orders", Key: []byte("order-0"), Value: []byte(`{"customer":"c0","amount_cents":100}`)},
				&kgo.Record{Topic: "orders", Key: key, Value: []byte(tc.value)},
				&kgo.Record{Topic: "orders", Key: []byte("order-2"), Value: []byte(`{"customer":"c2","amount_cents":102}`)})
			opts := append([]pipeline.GroupOpt{pipeline.CommitEvery(1), pipeline.Logger(log),
				pipeline.DeadLetters(env.rc, "t:")}, tc.opts...)
			r := start(t, env.brokers, tc.sink(t, env, log), opts...)
			commitOrStop(t, r, 3)
			if err := r.p.Close(r.ctx); err != nil {
				t.Fatal(err)
			}
			got := readAll(t, env.brokers, "orders.dlq")
			if len(got) != 1 {
				t.Fatalf("dead-letter topic holds %d records, want 1", len(got))
			}
			d := got[0]
			if !bytes.Equal(d.Key, key) || header(d, pipeline.HeaderSourceOffset) != "1" {
				t.Fatalf("dead letter has a %d-byte key from offset %s, want the whole %d-byte key from offset 1",
					len(d.Key), header(d, pipeline.HeaderSourceOffset), len(key))
			}
			if h := header(d, pipeline.HeaderError); len(h) > 1024 || (tc.named && !strings.Contains(h, named)) {
				t.Fatalf("%s is %d bytes (%.300s...), want at most 1024 naming the key %s", pipeline.HeaderError, len(h), h, named)
			}
			dead := false
			for _, l := range out.lines() {
				isDead := strings.Contains(l, `"msg":"poison record dead-lettered"`)
				dead = dead || isDead
				if (tc.allLogs || isDead) && len(l) > 4096 {
					t.Errorf("log line of %d bytes: %.300s...", len(l), l)
				}
			}
			if !dead {
				t.Fatal("no dead-letter log line")
			}
		})
	}
}
