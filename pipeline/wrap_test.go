package pipeline_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/shardpipe/shardpipe/pipeline"
	"github.com/shardpipe/shardpipe/sink"
)

// meeting is an Applier that is no Keyer: each Apply waits until n calls
// run at once, or until a bound passes (then it and every later call go
// on alone). met says whether n ever ran at once.
type meeting struct {
	n       int
	mu      sync.Mutex
	running int             // calls running now
	all     chan struct{}   // closed when n calls ran at once
	bound   <-chan struct{} // closed when the calls stop waiting
}

func newMeeting(t *testing.T, n int) *meeting {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return &meeting{n: n, all: make(chan struct{}), bound: ctx.Done()}
}

func (m *meeting) Apply(_ context.Context, b []sink.Record) ([]sink.Result, error) {
	m.mu.Lock()
	if m.running++; m.running == m.n && !m.met() {
		close(m.all)
	}
	m.mu.Unlock()
	select {
	case <-m.all:
	case <-m.bound:
	}
	m.mu.Lock()
	m.running--
	m.mu.Unlock()
	return make([]sink.Result, len(b)), nil
}

func (m *meeting) met() bool {
	select {
	case <-m.all:
		return true
	default:
		return false
	}
}

// TestKeylessRecordsThroughWrappers: with MaxInFlight and a Sink that is
// no Keyer, records without a record key run at once, each on its own, as
// the worker runs them under that Applier alone, whether it is the Sink
// itself or inside Paced, ByTopic or Wrap: a wrapper adds no key of its
// own (Paced and ByTopic used to answer the record key, empty, queueing
// every keyless record behind the one before).
func TestKeylessRecordsThroughWrappers(t *testing.T) {
	const n = 3
	tests := []struct {
		name string
		wrap func(pipeline.Applier) pipeline.Applier
	}{
		{"alone", func(a pipeline.Applier) pipeline.Applier { return a }},
		{"Paced", func(a pipeline.Applier) pipeline.Applier { return pipeline.Paced(a, 1e6) }},
		{"ByTopic", func(a pipeline.Applier) pipeline.Applier {
			return pipeline.ByTopic(map[string]pipeline.Applier{"orders": a})
		}},
		{"Wrap", func(a pipeline.Applier) pipeline.Applier { return pipeline.Wrap(a, nil) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := newFake(t, "orders", 1)
			var recs []*kgo.Record
			for range n {
				recs = append(recs, &kgo.Record{Topic: "orders", Value: []byte("{}")})
			}
			produce(t, env.brokers, recs...)
			m := newMeeting(t, n)
			r := start(t, env.brokers, tt.wrap(m), pipeline.MaxInFlight(n), pipeline.CommitEvery(n))
			waitCommitted(t, r, n)
			if err := r.p.Close(r.ctx); err != nil {
				t.Fatal(err)
			}
			if !m.met() {
				t.Errorf("the %d keyless records never ran at once: they were ordered by a key the Sink does not say", n)
			}
		})
	}
}

// TestWrap: the Middleware runs around the inner Apply and sees what it
// returns; a nil Middleware calls it; Finish goes to the inner Finisher
// without the Middleware; Unwrap returns the inner Applier; a nil inner
// fails each batch with an error saying so, and is no Keyer nor Finisher.
func TestWrap(t *testing.T) {
	tests := []struct {
		name      string
		inner     pipeline.Applier
		nilM      bool
		wantCalls int // middleware calls for one Apply and one Finish
		wantGot   int // records the inner Applier got
		errHas    string
	}{
		{"middleware", &finishRecorder{}, false, 1, 2, ""},
		{"nil middleware", &finishRecorder{}, true, 0, 2, ""},
		{"nil inner", nil, false, 1, 0, "Wrap got no inner Applier"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			calls := 0
			var m pipeline.Middleware
			if !tt.nilM {
				m = func(ctx context.Context, b []sink.Record, next pipeline.ApplyFunc) ([]sink.Result, error) {
					calls++
					return next(ctx, b)
				}
			}
			w := pipeline.Wrap(tt.inner, m)
			_, err := w.Apply(context.Background(), []sink.Record{{Topic: "a"}, {Topic: "a"}})
			if tt.errHas == "" && err != nil || tt.errHas != "" && (err == nil || !strings.Contains(err.Error(), tt.errHas)) {
				t.Fatalf("Apply: %v, want %q", err, tt.errHas)
			}
			f, isF := w.(pipeline.Finisher)
			if isF {
				if n, _, err := f.Finish(context.Background(), []sink.Record{{Offset: 3}}); n != 1 || err != nil {
					t.Errorf("Finish = %d, %v; want 1 finished", n, err)
				}
			}
			fr, _ := tt.inner.(*finishRecorder)
			if isF != (fr != nil) {
				t.Errorf("Wrap is a Finisher: %v; want %v (as its inner)", isF, fr != nil)
			}
			if calls != tt.wantCalls {
				t.Errorf("middleware called %d times, want %d (Apply only)", calls, tt.wantCalls)
			}
			if fr != nil && (len(fr.got) != tt.wantGot || len(fr.finished) != 1) {
				t.Errorf("inner got %d records and %d Finish calls, want %d and 1", len(fr.got), len(fr.finished), tt.wantGot)
			}
			u, ok := w.(interface{ Unwrap() pipeline.Applier })
			if !ok || u.Unwrap() != tt.inner {
				t.Errorf("Unwrap: %v, want the inner Applier", ok)
			}
		})
	}
}
