package termui

import "time"

// SampleEvery is how often a ReplayView samples progress for its rates,
// whatever its display interval.
const SampleEvery = 250 * time.Millisecond

// RateWindow is the span a rate is measured over: a rate settles within
// it after a start or a change of pace.
const RateWindow = 2 * time.Second

// rateWindow is a partition's landed offset sampled over time; its rate is
// the records landed per second over the last RateWindow (or since the
// first sample, when younger).
type rateWindow struct {
	at []time.Time
	n  []int64
}

// add records n landed at t, keeping one sample at or before t - RateWindow
// as the window's base.
func (w *rateWindow) add(t time.Time, n int64) {
	w.at, w.n = append(w.at, t), append(w.n, n)
	drop := 0
	for drop+1 < len(w.at) && !w.at[drop+1].After(t.Add(-RateWindow)) {
		drop++
	}
	w.at, w.n = w.at[drop:], w.n[drop:]
}

// rate returns records per second over the window; 0 before two samples.
func (w *rateWindow) rate() float64 {
	if len(w.at) < 2 {
		return 0
	}
	last := len(w.at) - 1
	dt := w.at[last].Sub(w.at[0]).Seconds()
	if dt <= 0 {
		return 0
	}
	return float64(w.n[last]-w.n[0]) / dt
}
