package flagcheck

import (
	"fmt"
	"strconv"
	"time"
)

// Range is the values a numeric setting takes: Min to Max, both included.
// Note, when not empty, says what a notable value means ("0: no bound").
type Range[T int | int64 | uint64 | float64 | time.Duration] struct {
	Min, Max T
	Note     string
}

// In returns the range min to max, with note.
func In[T int | int64 | uint64 | float64 | time.Duration](min, max T, note string) Range[T] {
	return Range[T]{Min: min, Max: max, Note: note}
}

// Check says what is wrong with v, or "": "want 1 to 100 (0: no bound)".
// NaN is outside every range. It does not allocate for a value inside.
func (r Range[T]) Check(v T) string {
	if v >= r.Min && v <= r.Max {
		return ""
	}
	return "want " + r.String()
}

// String is the range as docs/configuration.md's table writes it: "1 to 100",
// "1ms to 24h", with its note in parentheses.
func (r Range[T]) String() string {
	s := FormatNumber(r.Min) + " to " + FormatNumber(r.Max)
	if r.Note != "" {
		s += " (" + r.Note + ")"
	}
	return s
}

// FormatNumber prints v as the range tables do: a duration in its largest
// whole unit ("24h", "1ms", "0s", else Go's form), a number as Go prints it.
func FormatNumber[T int | int64 | uint64 | float64 | time.Duration](v T) string {
	switch x := any(v).(type) {
	case time.Duration:
		for _, u := range []struct {
			d    time.Duration
			name string
		}{{time.Hour, "h"}, {time.Minute, "m"}, {time.Second, "s"}, {time.Millisecond, "ms"}} {
			if x != 0 && x%u.d == 0 {
				return strconv.FormatInt(int64(x/u.d), 10) + u.name
			}
		}
		return x.String()
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	}
	return fmt.Sprint(v)
}
