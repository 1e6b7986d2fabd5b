package orders

import (
	"errors"
	"testing"
)

func TestGeneratorCountsAndDeterminism(t *testing.T) {
	tests := []struct {
		name      string
		cfg       GenConfig
		wantTotal int
		wantDups  int
	}{
		{"no duplicates", GenConfig{Count: 1000, Seed: 1}, 1000, 0},
		{"ten percent", GenConfig{Count: 10000, Duplicates: 0.1, Seed: 7}, 11000, 1000},
		{"rounding", GenConfig{Count: 15, Duplicates: 0.1, Seed: 3}, 17, 2},
		{"one", GenConfig{Count: 1, Duplicates: 2, Seed: 3}, 3, 2},
		{"empty", GenConfig{Count: 0, Duplicates: 0.5}, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			run := func() (Summary, []string) {
				g := NewGenerator(tt.cfg)
				var s Summary
				var keys []string
				resends := 0
				for {
					l, resend, ok := g.Next()
					if !ok {
						break
					}
					if resend {
						resends++
					}
					s.Add(l, 0)
					keys = append(keys, l.Key)
				}
				if resends != tt.wantDups {
					t.Fatalf("resends = %d, want %d", resends, tt.wantDups)
				}
				return s, keys
			}
			s, keys := run()
			if s.Records != tt.wantTotal || s.Unique != tt.cfg.Count || s.Duplicates != tt.wantDups {
				t.Fatalf("records=%d unique=%d duplicates=%d, want %d %d %d",
					s.Records, s.Unique, s.Duplicates, tt.wantTotal, tt.cfg.Count, tt.wantDups)
			}
			s2, keys2 := run()
			if s2.TotalCents != s.TotalCents || len(keys2) != len(keys) {
				t.Fatalf("same seed gave different orders")
			}
			for i := range keys {
				if keys[i] != keys2[i] {
					t.Fatalf("record %d: key %s then %s", i, keys[i], keys2[i])
				}
			}
		})
	}
}

func TestResendIsIdentical(t *testing.T) {
	g := NewGenerator(GenConfig{Count: 100, Duplicates: 0.5, Seed: 9})
	first := map[string]string{}
	for {
		l, resend, ok := g.Next()
		if !ok {
			break
		}
		if v, seen := first[l.Key]; seen {
			if !resend || v != string(l.Value) {
				t.Fatalf("key %s again: resend=%v, same value=%v", l.Key, resend, v == string(l.Value))
			}
			continue
		}
		if resend {
			t.Fatalf("key %s marked as resend on first sight", l.Key)
		}
		first[l.Key] = string(l.Value)
	}
}

func TestParseLine(t *testing.T) {
	tests := []struct {
		in         string
		wantKey    string
		wantTotals bool
		wantErr    bool
	}{
		{`{"order_id":"a1","customer":"c","amount_cents":12}`, "a1", true, false},
		{`  {"order_id":42,"customer":"c","amount_cents":5}  `, "42", true, false},
		{`{"order_id":"a2"}`, "a2", false, false},
		{`{"order_id":"a3","customer":"c","amount_cents":1.5}`, "a3", false, false},
		{`{"order_id":""}`, "", false, true},
		{`{"customer":"c"}`, "", false, true},
		{`[1,2]`, "", false, true},
		{`not json`, "", false, true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			l, err := ParseLine([]byte(tt.in))
			if tt.wantErr {
				if !errors.Is(err, ErrBadLine) {
					t.Fatalf("err = %v, want ErrBadLine", err)
				}
				return
			}
			if err != nil || l.Key != tt.wantKey || l.HasTotals != tt.wantTotals {
				t.Fatalf("got key %q totals %v err %v", l.Key, l.HasTotals, err)
			}
		})
	}
}
