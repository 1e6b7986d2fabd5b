package checkpoint

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// TestDecide covers every rule of the seed's Commit, on each side of each
// boundary.
func TestDecide(t *testing.T) {
	cases := []struct {
		name      string
		cur, next Position
		want      Verdict
	}{
		{"first commit from zero", Position{0, 0}, Position{0, 10}, Advance},
		{"same epoch higher offset", Position{3, 10}, Position{3, 11}, Advance},
		{"same epoch same offset is idempotent", Position{3, 10}, Position{3, 10}, Same},
		{"same epoch lower offset", Position{3, 10}, Position{3, 9}, StaleOffset},
		{"same epoch offset zero after progress", Position{3, 10}, Position{3, 0}, StaleOffset},
		{"lower epoch higher offset", Position{3, 10}, Position{2, 50}, StaleEpoch},
		{"lower epoch same offset", Position{3, 10}, Position{2, 10}, StaleEpoch},
		{"lower epoch lower offset", Position{3, 10}, Position{2, 5}, StaleEpoch},
		{"higher epoch higher offset", Position{3, 10}, Position{4, 20}, Advance},
		{"higher epoch same offset", Position{3, 10}, Position{4, 10}, Advance},
		{"higher epoch lower offset starts a new term", Position{3, 10}, Position{4, 5}, Advance},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := Decide(c.cur, c.next); got != c.want {
				t.Fatalf("Decide(%+v, %+v) = %v, want %v", c.cur, c.next, got, c.want)
			}
		})
	}
}

// TestDecideExhaustive checks Decide against the rules stated independently,
// over every pair of positions in a small grid.
func TestDecideExhaustive(t *testing.T) {
	for ce := int64(0); ce < 4; ce++ {
		for co := int64(0); co < 4; co++ {
			for ne := int64(0); ne < 4; ne++ {
				for no := int64(0); no < 4; no++ {
					cur, next := Position{ce, co}, Position{ne, no}
					var want Verdict
					if ne < ce {
						want = StaleEpoch
					} else if ne == ce && no < co {
						want = StaleOffset
					} else if ne == ce && no == co {
						want = Same
					} else {
						want = Advance
					}
					if got := Decide(cur, next); got != want {
						t.Fatalf("Decide(%+v, %+v) = %v, want %v", cur, next, got, want)
					}
				}
			}
		}
	}
}

// TestMemoryCommit runs the seed's Commit rules through the Memory store and
// checks the errors carry the partition, epochs and offsets.
func TestMemoryCommit(t *testing.T) {
	ctx := context.Background()
	p := Partition{Topic: "orders", Partition: 2}
	steps := []struct {
		epoch, offset int64
		wantErr       error
		wantPos       Position
		wantText      string
	}{
		{1, 10, nil, Position{1, 10}, ""},
		{1, 10, nil, Position{1, 10}, ""},
		{1, 7, ErrStaleOffset, Position{1, 10}, "commit orders/2 epoch 1 offset 7 (current epoch 1 offset 10)"},
		{2, 4, nil, Position{2, 4}, ""},
		{1, 99, ErrStaleEpoch, Position{2, 4}, "commit orders/2 epoch 1 offset 99 (current epoch 2 offset 4)"},
		{2, 30, nil, Position{2, 30}, ""},
	}
	m := NewMemory()
	for i, s := range steps {
		err := m.Commit(ctx, p, s.epoch, s.offset)
		if !errors.Is(err, s.wantErr) || (s.wantErr == nil) != (err == nil) {
			t.Fatalf("step %d: Commit(%d, %d) = %v, want %v", i, s.epoch, s.offset, err, s.wantErr)
		}
		if err != nil {
			var ce *CommitError
			if !errors.As(err, &ce) || ce.Partition != p || ce.Epoch != s.epoch || ce.Offset != s.offset {
				t.Fatalf("step %d: error %v does not carry the commit", i, err)
			}
			if !strings.Contains(err.Error(), s.wantText) {
				t.Fatalf("step %d: error %q lacks %q", i, err, s.wantText)
			}
		}
		if got, _ := m.Load(ctx, p); got != s.wantPos {
			t.Fatalf("step %d: position %+v, want %+v", i, got, s.wantPos)
		}
	}
}

func TestMemoryAcquireFences(t *testing.T) {
	ctx := context.Background()
	p := Partition{Topic: "t", Partition: 0}
	m := NewMemory()
	old, _ := m.Acquire(ctx, p)
	if err := m.Commit(ctx, p, old.Epoch, 30); err != nil {
		t.Fatal(err)
	}
	cur, _ := m.Acquire(ctx, p)
	if cur.Epoch != old.Epoch+1 || cur.Offset != 30 {
		t.Fatalf("Acquire = %+v, want epoch %d offset 30", cur, old.Epoch+1)
	}
	if err := m.Commit(ctx, p, old.Epoch, 40); !errors.Is(err, ErrStaleEpoch) {
		t.Fatalf("old holder's commit = %v, want ErrStaleEpoch", err)
	}
}
