package chaoscheck

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/shardpipe/shardpipe/internal/orders"
)

func order(id, cust string, cents int) []byte {
	return orders.Order{OrderID: id, Customer: cust, AmountCents: int64(cents)}.JSON()
}

// sample is a two-partition topic: orders a, b, c (a re-sent) and one
// poison record, fully consumed.
func sample() *Topic {
	t := newTopic("orders")
	t.add(Pos{0, 0}, []byte("a"), order("a", "x", 100))
	t.add(Pos{0, 1}, []byte("b"), order("b", "x", 50))
	t.add(Pos{1, 0}, []byte("c"), order("c", "y", 7))
	t.add(Pos{1, 1}, []byte("a"), order("a", "x", 100))
	t.add(Pos{1, 2}, []byte("poison-1"), []byte("not json"))
	t.End = map[int32]int64{0: 2, 1: 3}
	return t
}

func goodLedger() *Ledger {
	return &Ledger{
		Claims: map[string]Claim{
			"a": {Topic: "orders", Partition: 1, Offset: 1, State: "applied"},
			"b": {Topic: "orders", Partition: 0, Offset: 1, State: "applied"},
			"c": {Topic: "orders", Partition: 1, Offset: 0, State: "applied"},
		},
		Bad:    map[string]string{},
		Totals: map[string]int64{"x": 150, "y": 7},
	}
}

func goodDLQ() []DLQEntry {
	return []DLQEntry{{Topic: "orders", Source: Pos{1, 2}, Key: []byte("poison-1"), Value: []byte("not json")}}
}

func TestJudge(t *testing.T) {
	tests := []struct {
		name        string
		edit        func(l *Ledger, dlq *[]DLQEntry, committed map[int32]int64, ds *[]Decrease)
		lost, twice int
		want        string // a violation containing this; "" for none
	}{
		{name: "exactly once", edit: func(*Ledger, *[]DLQEntry, map[int32]int64, *[]Decrease) {}},
		{name: "missing ledger key", lost: 1, want: `order "b"`,
			edit: func(l *Ledger, _ *[]DLQEntry, _ map[int32]int64, _ *[]Decrease) {
				delete(l.Claims, "b")
				l.Totals["x"] = 100
			}},
		{name: "effect applied twice", twice: 1, want: "too many",
			edit: func(l *Ledger, _ *[]DLQEntry, _ map[int32]int64, _ *[]Decrease) { l.Totals["x"] = 250 }},
		{name: "phantom ledger key", want: `"zzz": no such order`,
			edit: func(l *Ledger, _ *[]DLQEntry, _ map[int32]int64, _ *[]Decrease) {
				l.Claims["zzz"] = Claim{Topic: "orders", State: "applied"}
			}},
		{name: "claim names the wrong record", want: "does not hold that order",
			edit: func(l *Ledger, _ *[]DLQEntry, _ map[int32]int64, _ *[]Decrease) {
				l.Claims["c"] = Claim{Topic: "orders", Partition: 0, Offset: 0, State: "applied"}
			}},
		{name: "poison applied", want: "poison record: it was applied",
			edit: func(l *Ledger, _ *[]DLQEntry, _ map[int32]int64, _ *[]Decrease) {
				l.Claims["poison-1"] = Claim{Topic: "orders", Partition: 1, Offset: 2, State: "applied"}
			}},
		{name: "poison not in the DLQ", lost: 1, want: "not in the DLQ",
			edit: func(_ *Ledger, d *[]DLQEntry, _ map[int32]int64, _ *[]Decrease) { *d = nil }},
		{name: "poison twice in the DLQ", twice: 1, want: "2 times",
			edit: func(_ *Ledger, d *[]DLQEntry, _ map[int32]int64, _ *[]Decrease) { *d = append(*d, (*d)[0]) }},
		{name: "good order in the DLQ", want: `a good order "b"`,
			edit: func(_ *Ledger, d *[]DLQEntry, _ map[int32]int64, _ *[]Decrease) {
				*d = append(*d, DLQEntry{Topic: "orders", Source: Pos{0, 1}})
			}},
		{name: "commit short of the end", want: "partition 1: committed offset 2, log end 3",
			edit: func(_ *Ledger, _ *[]DLQEntry, c map[int32]int64, _ *[]Decrease) { c[1] = 2 }},
		{name: "offset went backwards", want: "went back from 9 to 3",
			edit: func(_ *Ledger, _ *[]DLQEntry, _ map[int32]int64, ds *[]Decrease) {
				*ds = append(*ds, Decrease{Partition: 0, From: 9, To: 3})
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l, dlq, committed := goodLedger(), goodDLQ(), map[int32]int64{0: 2, 1: 3}
			var ds []Decrease
			tc.edit(l, &dlq, committed, &ds)
			r := judge(facts{topic: sample(), ledger: l, dlq: dlq, haveDLQ: true, committed: committed,
				watched: true, decreases: ds, polls: Polls{Made: 3, Seen: 2, Failed: 1}})
			if r.Orders != 4 || r.Unique != 3 || r.Poison != 1 {
				t.Errorf("orders/unique/poison = %d/%d/%d, want 4/3/1", r.Orders, r.Unique, r.Poison)
			}
			if r.Lost != tc.lost || r.Doubled != tc.twice {
				t.Errorf("lost=%d doubled=%d, want %d and %d\n%s", r.Lost, r.Doubled, tc.lost, tc.twice, r)
			}
			if tc.want == "" {
				if !r.OK() {
					t.Fatalf("want no violation, got\n%s", r)
				}
				return
			}
			if r.OK() || !strings.Contains(strings.Join(r.Violations, "\n"), tc.want) {
				t.Fatalf("want a violation containing %q, got\n%s", tc.want, r)
			}
		})
	}
}

func TestClassify(t *testing.T) {
	tests := []struct {
		key, value string
		poison     string
	}{
		{"o1", `{"customer":"c","amount_cents":5}`, ""},
		{"o1", `{"customer":7,"amount_cents":-5}`, ""},
		{"", `{"customer":"c","amount_cents":5}`, "empty key"},
		{"o1", `not json`, "value is not a JSON object"},
		{"o1", `[1,2]`, "value is not a JSON object"},
		{"o1", `null`, "value is not a JSON object"},
		{"o1", `{"amount_cents":5}`, "no customer"},
		{"o1", `{"customer":"","amount_cents":5}`, "no customer"},
		{"o1", `{"customer":"c","amount_cents":"5"}`, "amount_cents is not an int64"},
		{"o1", `{"customer":"c","amount_cents":5.5}`, "amount_cents is not an int64"},
		{"o1", `{"customer":"c","amount_cents":99999999999999999999}`, "amount_cents is not an int64"},
		{"o1", `{"customer":"c"}`, "amount_cents is not an int64"},
	}
	for _, tc := range tests {
		_, got := classify([]byte(tc.key), []byte(tc.value))
		if got != tc.poison {
			t.Errorf("classify(%q, %s) = %q, want %q", tc.key, tc.value, got, tc.poison)
		}
	}
}

// TestJudgeWatcher: a watch that never read the group's offsets fails the
// run (offset_decreases=0 would prove nothing); without a watcher there is
// nothing to judge.
func TestJudgeWatcher(t *testing.T) {
	tests := []struct {
		name    string
		watched bool
		polls   Polls
		want    string
	}{
		{"saw the offsets", true, Polls{Made: 10, Failed: 9, Seen: 1}, ""},
		{"every poll failed", true, Polls{Made: 10, Failed: 10}, "the watcher never read the group's committed offsets of orders (10 polls, 10 failed)"},
		{"answered without the topic", true, Polls{Made: 4}, "(4 polls, 0 failed)"},
		{"never polled", true, Polls{}, "(0 polls, 0 failed)"},
		{"no watcher", false, Polls{}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := judge(facts{topic: sample(), ledger: goodLedger(), dlq: goodDLQ(), haveDLQ: true,
				committed: map[int32]int64{0: 2, 1: 3}, watched: tc.watched, polls: tc.polls})
			got := strings.Join(r.Violations, "\n")
			if tc.want == "" && !r.OK() || tc.want != "" && !strings.Contains(got, tc.want) {
				t.Fatalf("violations %q, want %q", got, tc.want)
			}
		})
	}
}

// guardSample is sample() as guard mode reads it (values opaque), with
// guard claims and no totals.
func guardSample() (*Topic, *Ledger) {
	tp := newTopic("orders")
	tp.Opaque = true
	tp.add(Pos{0, 0}, []byte("a"), []byte("x"))
	tp.add(Pos{0, 1}, []byte("b"), []byte("not json is fine"))
	tp.add(Pos{1, 0}, []byte("c"), []byte("z"))
	tp.add(Pos{1, 1}, []byte("a"), []byte("x"))
	tp.add(Pos{1, 2}, nil, []byte("keyless"))
	tp.End = map[int32]int64{0: 2, 1: 3}
	l := &Ledger{Claims: map[string]Claim{
		"a": {Topic: "orders", Partition: 0, Offset: 0, State: "done"},
		"b": {Topic: "orders", Partition: 0, Offset: 1, State: "done"},
		"c": {Topic: "orders", Partition: 1, Offset: 0, State: "done"},
	}, Bad: map[string]string{}, Totals: map[string]int64{}}
	return tp, l
}

// TestJudgeEffects: each order's effect must run, and a key may run again
// only when the process of its previous run was SIGKILLed after that run
// and before it could mark the key done (doneGrace after the reply, or
// after a Redis outage under way then); such runs are counted apart.
func TestJudgeEffects(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	call := func(key string, p int32, o int64, who string, s float64) Call {
		return Call{Key: key, Topic: "orders", Partition: p, Offset: o, Consumer: who, Received: at(s), Replied: at(s + 0.01), Status: 200}
	}
	once := []Call{call("a", 0, 0, "h/1", 1), call("b", 0, 1, "h/1", 2), call("c", 1, 0, "h/2", 3)}
	tests := []struct {
		name           string
		calls          []Call
		kills          []Kill
		stops          []Kill // zombie SIGSTOPs
		down           []Window
		state          string // the claim of "a"; "" = done
		doubled, after int
		lost           int
		perKey         map[int]int
		want           string // a violation containing this; "" for none
	}{
		{name: "each once", calls: once, perKey: map[int]int{1: 3}},
		{name: "never ran", calls: once[:2], lost: 1, perKey: map[int]int{1: 2}, want: `order "c" (first at 1@0): its effect never ran`},
		{name: "run twice by a live process", calls: append(once, call("a", 0, 0, "h/1", 40)), doubled: 1,
			perKey: map[int]int{1: 2, 2: 1}, want: `effect run twice: key "a" ran again at 00:00:40.000 by h/1 (0@0) after its run at 00:00:01.000 by h/1 (0@0), which was not SIGKILLed or SIGSTOPped before it could mark the key done`},
		{name: "killed before done", calls: append(once, call("a", 0, 0, "h/3", 32)), kills: []Kill{{"h/1", at(1.005)}},
			after: 1, perKey: map[int]int{1: 2, 2: 1}},
		{name: "killed just after its request was sent", calls: append(once, call("a", 0, 0, "h/3", 32)), kills: []Kill{{"h/1", at(0.5)}},
			after: 1, perKey: map[int]int{1: 2, 2: 1}},
		{name: "killed long after it could mark done", calls: append(once, call("a", 0, 0, "h/3", 40)), kills: []Kill{{"h/1", at(20)}},
			doubled: 1, perKey: map[int]int{1: 2, 2: 1}, want: "which was not SIGKILLed or SIGSTOPped before it could mark the key done"},
		{name: "killed while Redis was down since the reply", calls: append(once, call("a", 0, 0, "h/3", 50)),
			kills: []Kill{{"h/1", at(15)}}, down: []Window{{at(0.5), at(16)}}, after: 1, perKey: map[int]int{1: 2, 2: 1}},
		{name: "killed well after Redis came back", calls: append(once, call("a", 0, 0, "h/3", 50)),
			kills: []Kill{{"h/1", at(25)}}, down: []Window{{at(0.5), at(16)}}, doubled: 1, perKey: map[int]int{1: 2, 2: 1},
			want: "not SIGKILLed or SIGSTOPped before"},
		// A zombie frozen in its call wakes with its term ended and the
		// call cut (no reply read): its outcome unknown, it is not taken
		// as done, and the next owner calls again.
		{name: "stopped (a zombie) before done", calls: append(once, call("a", 0, 0, "h/3", 32)), stops: []Kill{{"h/1", at(1.005)}},
			after: 1, perKey: map[int]int{1: 2, 2: 1}},
		{name: "stopped long after it could mark done", calls: append(once, call("a", 0, 0, "h/3", 40)), stops: []Kill{{"h/1", at(20)}},
			doubled: 1, perKey: map[int]int{1: 2, 2: 1}, want: "which was not SIGKILLed or SIGSTOPped before it could mark the key done"},
		// Held by the receiver past the caller's --http-timeout (4s here):
		// the caller gave up, its outcome unknown, and calls again.
		{name: "answered after the caller's timeout", calls: append([]Call{{Key: "a", Topic: "orders", Partition: 0, Offset: 0, Consumer: "h/1",
			Received: at(1), Replied: at(7), Status: 200}, call("a", 0, 0, "h/1", 12)}, once[1:]...), after: 1, perKey: map[int]int{1: 2, 2: 1}},
		{name: "answered within the caller's timeout", calls: append([]Call{{Key: "a", Topic: "orders", Partition: 0, Offset: 0, Consumer: "h/1",
			Received: at(1), Replied: at(2), Status: 200}, call("a", 0, 0, "h/1", 12)}, once[1:]...), doubled: 1, perKey: map[int]int{1: 2, 2: 1},
			want: "effect run twice"},
		{name: "another process killed", calls: append(once, call("a", 0, 0, "h/3", 32)), kills: []Kill{{"h/2", at(2)}},
			doubled: 1, perKey: map[int]int{1: 2, 2: 1}, want: "effect run twice"},
		{name: "three runs, one excused", calls: append(once, call("a", 1, 1, "h/3", 32), call("a", 0, 0, "h/3", 70)),
			kills: []Kill{{"h/1", at(1.5)}}, after: 1, doubled: 1, perKey: map[int]int{1: 2, 3: 1}, want: "ran again at 00:01:10.000 by h/3"},
		{name: "call names the wrong record", calls: []Call{call("a", 0, 1, "h/1", 1), once[1], once[2]},
			perKey: map[int]int{1: 3}, want: `effect call for "a" names orders 0@1, which does not hold that order`},
		{name: "call for no order", calls: append(once, call("zzz", 0, 0, "h/1", 5)), perKey: map[int]int{1: 4},
			want: `effect ran for "zzz", which is no order of topic orders`},
		{name: "receiver refused", calls: []Call{{Key: "a", Topic: "orders", Partition: 0, Offset: 0, Consumer: "h/1", Received: at(1), Replied: at(1), Status: 400}, once[1], once[2]},
			perKey: map[int]int{1: 3}, want: "the receiver answered 400"},
		{name: "claim left pending", calls: once, state: "pending", perKey: map[int]int{1: 3}, want: `ledger key "a": claim is "pending", want "done"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tp, l := guardSample()
			if tc.state != "" {
				c := l.Claims["a"]
				c.State = tc.state
				l.Claims["a"] = c
			}
			dlq := []DLQEntry{{Topic: "orders", Source: Pos{1, 2}, Value: []byte("keyless")}}
			r := judge(facts{topic: tp, ledger: l, dlq: dlq, haveDLQ: true, committed: map[int32]int64{0: 2, 1: 3},
				effects: &effectFacts{calls: tc.calls, kills: tc.kills, stops: tc.stops, redisDown: tc.down, httpTimeout: 4 * time.Second}})
			if r.Unique != 3 || r.Poison != 1 || r.Effects == nil {
				t.Fatalf("unique %d, poison %d, effects %v; want 3, 1 (the keyless record) and effect runs", r.Unique, r.Poison, r.Effects)
			}
			e := r.Effects
			if e.Doubled != tc.doubled || e.AfterKill != tc.after || r.Doubled != tc.doubled || r.Lost != tc.lost ||
				!reflect.DeepEqual(e.PerKey, tc.perKey) || len(e.Windows) != tc.after {
				t.Errorf("doubled %d (report %d), after kill %d (%d listed), lost %d, per key %v; want %d, %d, %d, %v\n%s",
					e.Doubled, r.Doubled, e.AfterKill, len(e.Windows), r.Lost, e.PerKey, tc.doubled, tc.after, tc.lost, tc.perKey, r)
			}
			got := strings.Join(r.Violations, "\n")
			if tc.want == "" && !r.OK() || tc.want != "" && (r.OK() || !strings.Contains(got, tc.want)) {
				t.Fatalf("violations:\n%s\nwant one containing %q", got, tc.want)
			}
		})
	}
}
