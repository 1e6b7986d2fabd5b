package pipeline_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/shardpipe/shardpipe/pipeline"
	"github.com/shardpipe/shardpipe/sink"
)

// recorder is an Applier that records the topics of the batches it got.
type recorder struct{ got []string }

func (r *recorder) Apply(_ context.Context, batch []sink.Record) ([]sink.Result, error) {
	for _, rec := range batch {
		r.got = append(r.got, rec.Topic)
	}
	return make([]sink.Result, len(batch)), nil
}

// TestPaced: batches are spaced by their size at the rate (the first at
// once), and a batch whose context ends while it waits is not applied.
func TestPaced(t *testing.T) {
	tests := []struct {
		name    string
		rate    float64
		batches []int
		least   time.Duration // the pace's lower bound on the whole run
	}{
		{"one batch at once", 10, []int{5}, 0},
		{"three batches of 10 at 100/s", 100, []int{10, 10, 10}, 200 * time.Millisecond},
		{"sizes add up", 200, []int{1, 39, 1}, 200 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := &recorder{}
			p := pipeline.Paced(rec, tt.rate)
			start := time.Now()
			n := 0
			for _, size := range tt.batches {
				if _, err := p.Apply(context.Background(), make([]sink.Record, size)); err != nil {
					t.Fatal(err)
				}
				n += size
			}
			if took := time.Since(start); took < tt.least {
				t.Errorf("took %v, want at least %v", took, tt.least)
			}
			if len(rec.got) != n {
				t.Errorf("%d records applied, want %d", len(rec.got), n)
			}
		})
	}
	rec := &recorder{}
	p := pipeline.Paced(rec, 1) // the second batch waits 10s
	if _, err := p.Apply(context.Background(), make([]sink.Record, 10)); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := p.Apply(ctx, make([]sink.Record, 1)); !errors.Is(err, context.Canceled) || len(rec.got) != 10 {
		t.Errorf("cancelled wait: %v with %d records applied; want context.Canceled and 10", err, len(rec.got))
	}
}

// TestByTopic: a batch goes to its topic's Applier; a topic without one,
// or a batch of two topics, is an error and nothing is applied.
func TestByTopic(t *testing.T) {
	tests := []struct {
		name   string
		batch  []string // topics of the records
		wantA  int
		wantB  int
		errHas string
	}{
		{"empty", nil, 0, 0, ""},
		{"topic a", []string{"a", "a"}, 2, 0, ""},
		{"topic b", []string{"b"}, 0, 1, ""},
		{"no applier", []string{"c"}, 0, 0, `no key space for topic "c"`},
		{"two topics", []string{"a", "b"}, 0, 0, `one batch holds topics "a" and "b"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, b := &recorder{}, &recorder{}
			bt := pipeline.ByTopic(map[string]pipeline.Applier{"a": a, "b": b})
			var batch []sink.Record
			for _, topic := range tt.batch {
				batch = append(batch, sink.Record{Topic: topic})
			}
			_, err := bt.Apply(context.Background(), batch)
			if tt.errHas == "" && err != nil || tt.errHas != "" && (err == nil || !strings.Contains(err.Error(), tt.errHas)) {
				t.Fatalf("err %v, want %q", err, tt.errHas)
			}
			if len(a.got) != tt.wantA || len(b.got) != tt.wantB {
				t.Errorf("a got %d, b got %d; want %d and %d", len(a.got), len(b.got), tt.wantA, tt.wantB)
			}
		})
	}
}

// finishRecorder is an Applier and Finisher that records the batches it
// was asked to finish.
type finishRecorder struct {
	recorder
	finished [][]sink.Record
}

func (f *finishRecorder) Finish(_ context.Context, b []sink.Record) (int, int, error) {
	f.finished = append(f.finished, b)
	return len(b), 0, nil
}

// TestWrappersFinish: ByTopic and Paced forward Finish to the Applier
// they wrap when it is a Finisher (guard mode: the batch's topic's
// Guarded), so a worker whose term ends with a batch of unknown outcome
// still marks done the effects that ran; otherwise they finish nothing.
func TestWrappersFinish(t *testing.T) {
	fa := &finishRecorder{}
	bt := pipeline.ByTopic(map[string]pipeline.Applier{"a": fa, "b": &recorder{}})
	wrapped := map[string]pipeline.Applier{"ByTopic": bt, "Paced": pipeline.Paced(bt, 1)}
	for name, w := range wrapped {
		t.Run(name, func(t *testing.T) {
			fa.finished = nil
			f, ok := w.(pipeline.Finisher)
			if !ok {
				t.Fatalf("%T is not a pipeline.Finisher", w)
			}
			n, left, err := f.Finish(context.Background(), []sink.Record{{Topic: "a", Offset: 7}})
			if n != 1 || left != 0 || err != nil || len(fa.finished) != 1 || fa.finished[0][0].Offset != 7 {
				t.Errorf("Finish of topic a's batch = %d, %d, %v; forwarded %v", n, left, err, fa.finished)
			}
			if n, left, err := f.Finish(context.Background(), []sink.Record{{Topic: "b"}}); n != 0 || left != 0 || err != nil {
				t.Errorf("Finish of topic b's batch (no Finisher) = %d, %d, %v; want nothing", n, left, err)
			}
			if _, _, err := f.Finish(context.Background(), []sink.Record{{Topic: "c"}}); err == nil {
				t.Error("Finish of a topic without an Applier: no error")
			}
		})
	}
}
