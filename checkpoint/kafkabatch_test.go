package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestCommitQueueHandOver walks the hand-over rules step by step: the first
// commit leads, commits arriving while it sends wait, and after its one
// request the leader hands the lead to the oldest of them, who sends all of
// them; the last leader with nobody waiting ends the sending.
func TestCommitQueueHandOver(t *testing.T) {
	var q commitQueue
	r := func(p int32) *commitReq {
		return newCommitReq(context.Background(), Partition{Topic: "t", Partition: p}, 1, 0, "")
	}
	parts := func(rs []*commitReq) string {
		s := ""
		for _, r := range rs {
			s += fmt.Sprint(r.p.Partition)
		}
		return s
	}
	a, b, c, d := r(0), r(1), r(2), r(3)
	steps := []struct {
		name string
		do   func() string
		want string
	}{
		{"a joins an idle queue and leads", func() string { return fmt.Sprint(q.join(a)) }, "true"},
		{"a takes its own commit", func() string { return parts(q.take()) }, "0"},
		{"b joins while a sends: waits", func() string { return fmt.Sprint(q.join(b)) }, "false"},
		{"c joins while a sends: waits", func() string { return fmt.Sprint(q.join(c)) }, "false"},
		{"a answered: hands over to b", func() string { return parts([]*commitReq{q.handOver()}) }, "1"},
		{"a commits again while b leads: waits", func() string { return fmt.Sprint(q.join(a)) }, "false"},
		{"b sends b, c and a's new commit", func() string { return parts(q.take()) }, "120"},
		{"d joins while b sends: waits", func() string { return fmt.Sprint(q.join(d)) }, "false"},
		{"b answered: hands over to d", func() string { return parts([]*commitReq{q.handOver()}) }, "3"},
		{"d sends its own", func() string { return parts(q.take()) }, "3"},
		{"d answered: nobody waits", func() string { return fmt.Sprint(q.handOver() == nil, q.sending) }, "true false"},
		{"the next commit leads again", func() string { return fmt.Sprint(q.join(a)) }, "true"},
	}
	for _, s := range steps {
		if got := s.do(); got != s.want {
			t.Fatalf("%s: got %s, want %s", s.name, got, s.want)
		}
	}
}

// TestCommitBatcherLeaderHandsOver steps a batcher whose send is a stand-in
// that blocks until released: a commit that leads a request returns once
// that request is answered, although another partition's commit queued
// meanwhile; the queued commit then sends its own request.
func TestCommitBatcherLeaderHandsOver(t *testing.T) {
	type sent struct {
		rs      []*commitReq
		release chan struct{}
	}
	sends := make(chan sent)
	var b commitBatcher
	b.send = func(rs []*commitReq) {
		s := sent{rs: rs, release: make(chan struct{})}
		sends <- s
		<-s.release
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	commit := func(p int32) chan error {
		done := make(chan error, 1)
		go func() { done <- b.commit(ctx, Partition{Topic: "t", Partition: p}, 1, 0, "") }()
		return done
	}
	next := func(want int32) sent {
		t.Helper()
		select {
		case s := <-sends:
			if len(s.rs) != 1 || s.rs[0].p.Partition != want {
				t.Fatalf("request carries %d commits (first %v), want partition %d's alone", len(s.rs), s.rs[0].p, want)
			}
			return s
		case <-ctx.Done():
			t.Fatalf("no request for partition %d", want)
			return sent{}
		}
	}
	aDone := commit(0)
	first := next(0)
	bDone := commit(1)
	for { // b's commit is queued behind a's request
		b.mu.Lock()
		n := len(b.q.waiting)
		b.mu.Unlock()
		if n == 1 {
			break
		}
		if ctx.Err() != nil {
			t.Fatal("partition 1's commit never queued")
		}
		runtime.Gosched()
	}
	close(first.release)
	select {
	case err := <-aDone:
		if err != nil {
			t.Fatal(err)
		}
	case <-ctx.Done():
		t.Fatal("partition 0's commit did not return after its request was answered: its leader went on sending partition 1's")
	}
	second := next(1)
	close(second.release)
	if err := <-bDone; err != nil {
		t.Fatal(err)
	}
}

// TestCommitBatcherConcurrentAnswers runs 12 partitions committing in a
// tight loop through a batcher whose send is a stand-in for the broker: no
// request carries a partition twice, every commit gets its own partition's
// answer, and every partition finishes.
func TestCommitBatcherConcurrentAnswers(t *testing.T) {
	const (
		partitions = 12
		rounds     = 300
	)
	var sends atomic.Int64
	refused := errors.New("refused")
	b := commitBatcher{send: func(rs []*commitReq) {
		sends.Add(1)
		seen := map[Partition]bool{}
		for _, r := range rs {
			if seen[r.p] {
				t.Errorf("one request carries %s twice", r.p)
			}
			seen[r.p] = true
			if r.offset%7 == 0 { // a per-partition answer, to check each caller gets its own
				r.err = fmt.Errorf("%s at %d: %w", r.p, r.offset, refused)
			}
		}
		time.Sleep(50 * time.Microsecond) // the stand-in's round trip
	}}
	var wg sync.WaitGroup
	var commits [partitions]int
	for i := range partitions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p := Partition{Topic: "t", Partition: int32(i)}
			for off := int64(1); off <= rounds; off++ {
				err := b.commit(context.Background(), p, off, 0, "")
				if want := off%7 == 0; errors.Is(err, refused) != want {
					t.Errorf("%s at %d: got %v, want refused=%v", p, off, err, want)
				}
				commits[i]++
			}
		}()
	}
	wg.Wait()
	t.Logf("%d commits in %d requests", partitions*rounds, sends.Load())
	for i, n := range commits {
		if n != rounds {
			t.Errorf("partition %d: %d commits, want %d", i, n, rounds)
		}
	}
}
