package checkpoint

import "testing"

func TestPolicy(t *testing.T) {
	t0 := time0()
	cases := []struct {
		name   string
		p      Policy
		landed int
		age    int // seconds since the oldest uncommitted landing
		want   bool
	}{
		{"nothing landed", Policy{Every: 10, Interval: 1e9}, 0, 99, false},
		{"below count and interval", Policy{Every: 10, Interval: 5e9}, 9, 4, false},
		{"count reached", Policy{Every: 10, Interval: 5e9}, 10, 0, true},
		{"interval reached", Policy{Every: 10, Interval: 5e9}, 1, 5, true},
		{"count off, interval reached", Policy{Interval: 5e9}, 1000, 5, true},
		{"count off, interval not reached", Policy{Interval: 5e9}, 1000, 4, false},
		{"both off", Policy{}, 1000, 1000, false},
		{"bound reached before count and interval", Policy{Every: 100, Interval: 5e9, Max: 50}, 50, 0, true},
		{"below the bound", Policy{Every: 100, Interval: 5e9, Max: 50}, 49, 4, false},
		{"bound alone reached", Policy{Max: 50}, 50, 0, true},
		{"bound alone not reached", Policy{Max: 50}, 49, 1000, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			now := t0.Add(secs(c.age))
			if got := c.p.Due(c.landed, t0, now); got != c.want {
				t.Fatalf("Due = %v, want %v", got, c.want)
			}
		})
	}
	nexts := []struct {
		p      Policy
		landed int
		want   int // seconds after since; -1: no commit due
	}{
		{Policy{Every: 10, Interval: 5e9}, 0, -1},
		{Policy{Every: 10, Interval: 5e9}, 3, 5},
		{Policy{Every: 10, Interval: 5e9}, 10, 0},
		{Policy{Every: 10}, 3, -1},
		{Policy{Interval: 5e9}, 3, 5},
		{Policy{}, 3, -1},
		{Policy{Every: 10, Max: 40}, 40, 0}, // commits failed past Every: due now, at the bound
		{Policy{Interval: 5e9, Max: 40}, 39, 5},
		{Policy{Interval: 5e9, Max: 40}, 40, 0},
	}
	for _, n := range nexts {
		at, ok := n.p.Next(n.landed, t0)
		if !ok && n.want != -1 || ok && (n.want == -1 || !at.Equal(t0.Add(secs(n.want)))) {
			t.Errorf("%+v.Next(%d) = %v, %v; want +%ds", n.p, n.landed, at, ok, n.want)
		}
	}
	rooms := []struct {
		p             Policy
		landed, batch int
		want          int
	}{
		{Policy{Every: 10}, 0, 500, 10},
		{Policy{Every: 10}, 7, 500, 3},
		{Policy{Every: 10}, 12, 500, 8},
		{Policy{Every: 10}, 10, 500, 10},
		{Policy{Every: 1000}, 0, 500, 500},
		{Policy{}, 0, 500, 500},
		// With a bound: commits failing, batches keep their size up to it,
		// then nothing more lands until a commit succeeds.
		{Policy{Every: 10, Max: 35}, 20, 500, 10},
		{Policy{Every: 10, Max: 35}, 30, 500, 5},
		{Policy{Every: 10, Max: 35}, 35, 500, 0},
		{Policy{Every: 10, Max: 35}, 36, 500, 0}, // never negative
		{Policy{Max: 35}, 0, 500, 35},
		{Policy{Max: 1000}, 0, 500, 500},
		{Policy{Max: 1000}, 990, 500, 10},
	}
	for _, r := range rooms {
		if got := r.p.Room(r.landed, r.batch); got != r.want {
			t.Errorf("%+v.Room(%d, %d) = %d, want %d", r.p, r.landed, r.batch, got, r.want)
		}
	}
}
