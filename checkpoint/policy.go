package checkpoint

import "time"

// Policy says when a partition worker commits, and how much it may land
// before it must. A commit is due once Every records have landed since the
// last commit, or once Interval has passed since the oldest
// landed-but-uncommitted record, whichever comes first. Revocation and
// shutdown always commit, whatever the policy says.
//
// Max bounds the records landed past the last commit, whether commits
// succeed or fail: Room lets no batch take the partition past it, and a
// commit is due at once when it is reached. While commits fail, a worker at
// Max takes no more records (its queue fills and its fetching pauses) until
// a commit succeeds. So a crash re-reads at most Max landed records of a
// partition, and at most Every while commits succeed.
//
// A zero Every disables the count trigger and a zero Interval the time
// trigger; with both zero and no Max a partition commits only on revoke and
// shutdown. A zero Max means no bound.
type Policy struct {
	Every    int           // landed records that make a commit due; 0: no count trigger
	Interval time.Duration // how long after the oldest uncommitted record landed a commit is due; 0: no time trigger
	Max      int           // the most records landed past the last commit; 0: no bound
}

// Next says when the next commit is due with landed records uncommitted, the
// oldest of them landed at since: since itself once Every (or Max) have
// landed, else since+Interval. It reports false when nothing has landed or
// no trigger is on.
func (p Policy) Next(landed int, since time.Time) (time.Time, bool) {
	switch {
	case landed <= 0:
		return time.Time{}, false
	case p.Every > 0 && landed >= p.Every, p.Max > 0 && landed >= p.Max:
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

// Room is how many more records may land before a commit, at most batch: a
// worker sizes its next batch by it so that commits fall exactly every Every
// records. When a commit is overdue (it failed and waits for a retry) Room
// counts to the next multiple of Every, so batches keep their size, but
// never past Max: at Max it returns 0, and the worker must commit before it
// lands anything more. It returns batch when neither Every nor Max is set.
func (p Policy) Room(landed, batch int) int {
	r := batch
	if p.Every > 0 {
		r = min(r, p.Every-landed%p.Every)
	}
	if p.Max > 0 {
		r = min(r, max(p.Max-landed, 0))
	}
	return r
}
