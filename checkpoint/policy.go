package checkpoint

import "time"

// Policy says when a partition worker commits. A commit is due once Every
// records have landed since the last commit, or once Interval has passed since
// the oldest landed-but-uncommitted record, whichever comes first. Revocation
// and shutdown always commit, whatever the policy says.
//
// A zero Every disables the count trigger and a zero Interval the time
// trigger; with both zero a partition commits only on revoke and shutdown.
type Policy struct {
	Every    int
	Interval time.Duration
}

// Next says when the next commit is due with landed records uncommitted, the
// oldest of them landed at since: since itself once Every have landed, else
// since+Interval. It reports false when nothing has landed or no trigger
// is on.
func (p Policy) Next(landed int, since time.Time) (time.Time, bool) {
	switch {
	case landed <= 0:
		return time.Time{}, false
	case p.Every > 0 && landed >= p.Every:
		return since, true
	case p.Interval > 0:
		return since.Add(p.Interval), true
	}
	return time.Time{}, false
}

// Due reports whether a commit is due at now: Next has come.
func (p Policy) Due(landed int, since, now time.Time) bool {
	at, ok := p.Next(landed, since)
	return ok && !now.Before(at)
}

// Room is how many more records may land before the count trigger fires: a
// worker sizes its next batch by it so that commits fall exactly every Every
// records. When a commit is overdue (it failed and waits for a retry) Room
// counts to the next multiple of Every, so batches keep their size. It
// returns max when the count trigger is off.
func (p Policy) Room(landed, max int) int {
	if p.Every <= 0 {
		return max
	}
	r := p.Every - landed%p.Every
	if r > max {
		r = max
	}
	return r
}
