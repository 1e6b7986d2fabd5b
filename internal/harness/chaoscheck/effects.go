package chaoscheck

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Call is one external effect call as the chaos receiver recorded it (one
// JSON line of its calls file): the business key (Idempotency-Key), the
// source record it names, the calling process (host/pid) and when the call
// arrived and was answered.
type Call struct {
	Key       string    `json:"key"`
	RecordKey string    `json:"record_key,omitempty"` // the Kafka record key, when the record has one
	Topic     string    `json:"topic"`
	Partition int32     `json:"partition"`
	Offset    int64     `json:"offset"`
	Consumer  string    `json:"consumer"`
	Received  time.Time `json:"received"`
	Replied   time.Time `json:"replied"`
	Status    int       `json:"status"`
}

// Kill is a consumer process the driver SIGKILLed: its identity as it
// calls the receiver (host/pid) and when the signal was sent.
type Kill struct {
	Consumer string
	At       time.Time
}

// Window is a stretch of time during which Redis was certainly down: from
// after its kill was done to before its restart began.
type Window struct{ From, To time.Time }

// doneGrace is how long a live consumer may take, while Redis is up, to mark
// a key done after the effect's reply: a round trip, behind the pipeline's
// batch retry backoff (at most 5s) when the first attempt failed, with room
// for a loaded machine. A kill later than that (counted from the end of a
// Redis outage that began by then) came after the done write should have
// landed, so a run again after it is not the documented window.
const doneGrace = 8 * time.Second

// sendSlack is how much earlier than the receiver saw a call its process
// may have been killed: a request written just before SIGKILL is read by
// the receiver after the process died.
const sendSlack = time.Second

// ReadCalls reads a receiver's calls file.
func ReadCalls(path string) ([]Call, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []Call
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	for n := 1; sc.Scan(); n++ {
		var c Call
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			return nil, fmt.Errorf("%s line %d: %w", path, n, err)
		}
		out = append(out, c)
	}
	return out, sc.Err()
}

// EffectRuns is what the calls say about the external effect.
type EffectRuns struct {
	Calls int
	// PerKey counts keys by how many times their effect ran: PerKey[1] is
	// the keys run once.
	PerKey map[int]int
	// AfterKill counts runs again after the previous run's process was
	// SIGKILLed before it could mark the key done (guard mode's crash
	// window), or SIGSTOPped with its call under way, cut when it woke
	// (an unknown outcome, called again), or answered past the caller's
	// HTTP timeout (likewise). Windows lists them (the first few).
	AfterKill int
	Windows   []string
	// Doubled counts runs again outside that window: each is a violation.
	Doubled int
	// Stranded counts calls answered while Redis was certainly down:
	// effects that ran and whose done writes met the outage.
	Stranded int
}

// Line is the figures of the effect runs.
func (e EffectRuns) Line() string {
	runs := make([]int, 0, len(e.PerKey))
	for n := range e.PerKey {
		runs = append(runs, n)
	}
	sort.Ints(runs)
	parts := make([]string, len(runs))
	for i, n := range runs {
		parts[i] = strconv.Itoa(n) + ":" + strconv.Itoa(e.PerKey[n])
	}
	return fmt.Sprintf("effect_calls=%d stranded_effects=%d runs_per_key=%s reruns_in_window=%d doubled_effects=%d",
		e.Calls, e.Stranded, strings.Join(parts, ","), e.AfterKill, e.Doubled)
}

// checkEffects judges the receiver's calls against the topic: every unique
// order's effect ran at least once, every call names a record holding its
// key, and a key ran again only when the process of its previous run was
// SIGKILLed or SIGSTOPped after that run was received and before it could
// mark the key done (doneGrace after the reply, or after the end of a Redis
// outage that kept it from writing): a crash between the effect and the
// done write, whose claim the next owner takes over when the lease lapses,
// or a zombie frozen in its call that woke with its term ended and the
// call cut, its outcome unknown, which is not taken as done; or when the
// receiver answered the previous call past the caller's HTTP timeout (the
// caller gave up, its outcome unknown, and called again).
func checkEffects(t *Topic, fx *effectFacts, v *verdict) EffectRuns {
	calls, redisDown := fx.calls, fx.redisDown
	e := EffectRuns{Calls: len(calls), PerKey: map[int]int{}}
	byKey := map[string][]Call{}
	for _, c := range calls {
		for _, w := range redisDown {
			if c.Replied.After(w.From) && c.Replied.Before(w.To) {
				e.Stranded++
				break
			}
		}
		switch {
		case c.Status < 200 || c.Status > 299:
			v.fail("effect call for %q (%s %d@%d) by %s: the receiver answered %d", c.Key, c.Topic, c.Partition, c.Offset, c.Consumer, c.Status)
		case c.Topic != t.Name || t.Keys[Pos{c.Partition, c.Offset}] != c.Key:
			v.fail("effect call for %q names %s %d@%d, which does not hold that order", c.Key, c.Topic, c.Partition, c.Offset)
		}
		byKey[c.Key] = append(byKey[c.Key], c)
	}
	killed, stopped := map[string][]time.Time{}, map[string][]time.Time{}
	for _, k := range fx.kills {
		killed[k.Consumer] = append(killed[k.Consumer], k.At)
	}
	for _, k := range fx.stops {
		stopped[k.Consumer] = append(stopped[k.Consumer], k.At)
	}
	keys := make([]string, 0, len(byKey))
	for k := range byKey {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, key := range keys {
		cs := byKey[key]
		if _, ok := t.Orders[key]; !ok {
			v.fail("effect ran for %q, which is no order of topic %s", key, t.Name)
		}
		e.PerKey[len(cs)]++
		sort.Slice(cs, func(i, j int) bool { return cs[i].Received.Before(cs[j].Received) })
		for i := 1; i < len(cs); i++ {
			prev, cur := cs[i-1], cs[i]
			what := fmt.Sprintf("key %q ran again at %s by %s (%d@%d) after its run at %s by %s (%d@%d)", key,
				stamp(cur.Received), cur.Consumer, cur.Partition, cur.Offset,
				stamp(prev.Received), prev.Consumer, prev.Partition, prev.Offset)
			from, by := prev.Received.Add(-sendSlack), doneBy(prev.Replied, redisDown)
			why := ""
			switch {
			case diedBetween(killed[prev.Consumer], from, by, cur.Received):
				why = "SIGKILLed in between"
			case diedBetween(stopped[prev.Consumer], from, by, cur.Received):
				why = "SIGSTOPped (a zombie, its call cut when it woke) in between"
			case fx.httpTimeout > 0 && prev.Replied.Sub(prev.Received) >= fx.httpTimeout-sendSlack:
				why = fmt.Sprintf("answered %v after it arrived, past the caller's %v timeout (its outcome unknown to the caller, so called again), and was not SIGKILLed or SIGSTOPped",
					prev.Replied.Sub(prev.Received).Round(time.Millisecond), fx.httpTimeout)
			}
			if why != "" {
				e.AfterKill++
				if len(e.Windows) < maxListed {
					e.Windows = append(e.Windows, what+", which was "+why)
				}
				continue
			}
			e.Doubled++
			v.doubled++
			v.fail("effect run twice: %s, which was not SIGKILLed or SIGSTOPped before it could mark the key done", what)
		}
	}
	for id, o := range t.Orders {
		if len(byKey[id]) == 0 {
			v.lost++
			v.fail("order %q (first at %s): its effect never ran", id, o.At)
		}
	}
	return e
}

// doneBy is when a live consumer that got the effect's reply at replied
// must have marked the key done: doneGrace later, or doneGrace after the
// end of a Redis outage under way by then.
func doneBy(replied time.Time, redisDown []Window) time.Time {
	from := replied
	for changed := true; changed; {
		changed = false
		for _, w := range redisDown {
			if !w.From.After(from.Add(doneGrace)) && w.To.After(from) {
				from, changed = w.To, true
			}
		}
	}
	return from.Add(doneGrace)
}

// diedBetween reports whether one of kills lies in [from, min(by, next)].
func diedBetween(kills []time.Time, from, by, next time.Time) bool {
	to := by
	if next.Before(to) {
		to = next
	}
	for _, at := range kills {
		if !at.Before(from) && !at.After(to) {
			return true
		}
	}
	return false
}

func stamp(t time.Time) string { return t.UTC().Format("15:04:05.000") }
