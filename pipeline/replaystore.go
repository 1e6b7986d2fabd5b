package pipeline

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// ErrPlanChanged means a run of a replay id was given other ranges than the
// ones the id's first run stored: resuming its checkpoints over a different
// range would skip records, or mark partitions done with nothing read.
var ErrPlanChanged = errors.New("pipeline: replay ranges differ from the ones its first run stored")

// StoredPlan is what the first run of a replay id stores next to its
// checkpoints, so every rerun of the id reads the same ranges.
type StoredPlan struct {
	Ranges []Range   // by partition
	Given  string    // how the caller described the bounds (PlanGiven); "" for none
	At     time.Time // when the first run stored it
}

// String lists the ranges as "partition:from-to", comma-separated.
func (p StoredPlan) String() string { return rangesString(p.Ranges) }

// planKey is the Redis hash of a replay's stored plan: next to its
// checkpoints (prefix + id + ":" + topic + ":" + partition), which never end
// in "plan".
func planKey(prefix, id, topic string) string { return prefix + id + ":" + topic + ":plan" }

// storePlanLua stores the plan unless one is stored, and returns the stored
// one's fields (HGETALL) when there was one, nil otherwise.
const storePlanLua = `
if redis.call('EXISTS', KEYS[1]) == 1 then return redis.call('HGETALL', KEYS[1]) end
for i = 1, #ARGV, 2 do redis.call('HSET', KEYS[1], ARGV[i], ARGV[i+1]) end
return false
`

// LoadPlan returns the plan the first run of replay id over topic stored
// under prefix (DefaultReplayPrefix when empty); false when it has none (no
// run of the id started yet). It costs one Redis round trip.
func LoadPlan(ctx context.Context, rdb redis.UniversalClient, prefix, id, topic string) (StoredPlan, bool, error) {
	if prefix == "" {
		prefix = DefaultReplayPrefix
	}
	m, err := rdb.HGetAll(ctx, planKey(prefix, id, topic)).Result()
	if err != nil {
		return StoredPlan{}, false, fmt.Errorf("load the plan of replay %q: %w", id, err)
	}
	if len(m) == 0 {
		return StoredPlan{}, false, nil
	}
	p, err := parsePlan(m)
	if err != nil {
		return StoredPlan{}, false, fmt.Errorf("load the plan of replay %q: %w", id, err)
	}
	return p, true, nil
}

// keepPlan stores the replay's ranges as its id's plan when no run stored
// one yet, and otherwise checks that the stored plan has the same ranges:
// an error wrapping ErrPlanChanged if not. One Redis round trip.
func (r *Replay) keepPlan(ctx context.Context) error {
	args := []any{"given", r.cfg.replayGiven, "at", time.Now().UTC().Format(time.RFC3339Nano)}
	for _, rg := range r.ranges {
		args = append(args, "p:"+strconv.Itoa(int(rg.Partition)), fmt.Sprintf("%d-%d", rg.From, rg.To))
	}
	res, err := redis.NewScript(storePlanLua).Run(ctx, r.rdb, []string{planKey(r.cfg.replayPrefix, r.id, r.topic)}, args...).StringSlice()
	if errors.Is(err, redis.Nil) {
		r.cfg.logger.Info("replay plan stored: reruns of this id read these ranges", "id", r.id, "topic", r.topic,
			"ranges", rangesString(r.ranges), "given", r.cfg.replayGiven)
		return nil
	}
	if err != nil {
		return fmt.Errorf("replay %q: store its plan: %w", r.id, err)
	}
	m := make(map[string]string, len(res)/2)
	for i := 0; i+1 < len(res); i += 2 {
		m[res[i]] = res[i+1]
	}
	p, err := parsePlan(m)
	if err != nil {
		return fmt.Errorf("replay %q: %w", r.id, err)
	}
	if !sameRanges(p.Ranges, r.ranges) {
		return fmt.Errorf("replay %q of %s: %w: its first run (%s, given %q) stored %s, this one was given %s",
			r.id, r.topic, ErrPlanChanged, p.At.Format(time.RFC3339), p.Given, p, rangesString(r.ranges))
	}
	r.cfg.logger.Info("replay continues the plan its first run stored", "id", r.id, "topic", r.topic,
		"ranges", p.String(), "given", p.Given, "stored_at", p.At.Format(time.RFC3339))
	return nil
}

func parsePlan(m map[string]string) (StoredPlan, error) {
	p := StoredPlan{Given: m["given"]}
	if at, err := time.Parse(time.RFC3339Nano, m["at"]); err == nil {
		p.At = at
	}
	for k, v := range m {
		part, ok := strings.CutPrefix(k, "p:")
		if !ok {
			continue
		}
		n, err1 := strconv.ParseInt(part, 10, 32)
		f, t, ok := strings.Cut(v, "-")
		from, err2 := strconv.ParseInt(f, 10, 64)
		to, err3 := strconv.ParseInt(t, 10, 64)
		if err := errors.Join(err1, err2, err3); err != nil || !ok {
			return StoredPlan{}, fmt.Errorf("stored plan field %s = %q is malformed", k, v)
		}
		p.Ranges = append(p.Ranges, Range{Partition: int32(n), From: from, To: to})
	}
	slices.SortFunc(p.Ranges, func(a, b Range) int { return int(a.Partition) - int(b.Partition) })
	return p, nil
}

func sameRanges(a, b []Range) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	for _, s := range [][]Range{a, b} {
		slices.SortFunc(s, func(x, y Range) int { return int(x.Partition) - int(y.Partition) })
	}
	return slices.Equal(a, b)
}

// rangesString lists ranges as "partition:from-to", comma-separated.
func rangesString(rs []Range) string {
	parts := make([]string, len(rs))
	for i, rg := range rs {
		parts[i] = fmt.Sprintf("%d:%d-%d", rg.Partition, rg.From, rg.To)
	}
	return strings.Join(parts, ",")
}
