package chaos

import (
	"math/rand/v2"
	"reflect"
	"testing"
	"time"
)

func TestPhaseSchedule(t *testing.T) {
	tests := []struct {
		name      string
		consumers int
		kills     int
		fixed     []faultKind
	}{
		{"no kills", 3, 0, recordFaults},
		{"short run", 3, 2, recordFaults},
		{"full run", 3, 20, recordFaults},
		{"guard pass", 3, 4, guardFaults},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := phaseSchedule(rand.New(rand.NewPCG(7, 7)), tc.consumers, tc.kills, 4*time.Second, tc.fixed)
			b := phaseSchedule(rand.New(rand.NewPCG(7, 7)), tc.consumers, tc.kills, 4*time.Second, tc.fixed)
			if !reflect.DeepEqual(a, b) {
				t.Fatalf("same seed, different schedules:\n%v\n%v", a, b)
			}
			count := map[faultKind]int{}
			for _, s := range a {
				count[s.Kind]++
				if s.Slot < 0 || s.Slot >= tc.consumers {
					t.Errorf("%v: slot out of range", s)
				}
				if s.Gap < 2*time.Second || s.Gap > 6*time.Second {
					t.Errorf("%v: gap outside 0.5..1.5 x 4s", s)
				}
			}
			want := map[faultKind]int{faultKill: tc.kills}
			for _, k := range tc.fixed {
				want[k]++
			}
			if tc.kills == 0 {
				delete(want, faultKill)
			}
			if !reflect.DeepEqual(count, want) {
				t.Errorf("faults %v, want %v", count, want)
			}
		})
	}
}
