package opshttp

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/shardpipe/shardpipe/pipeline"
)

// Source is what a Probe reads: a *pipeline.Pipeline is one.
type Source interface {
	// Stats returns per-partition counters (pipeline.Pipeline.Stats).
	Stats() []pipeline.PartitionStats
	// Err returns the error that stopped the pipeline, nil while it runs.
	Err() error
	// GroupMetadata returns the member ID ("" before joining) and the
	// generation or member epoch.
	GroupMetadata() (member string, generation int32)
}

// Check is one named condition of a Report.
type Check struct {
	Name   string `json:"name"`   // what is checked, e.g. "redis"
	OK     bool   `json:"ok"`     // whether it holds
	Detail string `json:"detail"` // what was found, for a person reading the probe
}

// Report is a probe's answer: OK when every check holds.
type Report struct {
	OK     bool    `json:"ok"`     // every check holds
	Checks []Check `json:"checks"` // each check, in a fixed order
}

func (r *Report) add(name string, ok bool, format string, args ...any) {
	r.Checks = append(r.Checks, Check{Name: name, OK: ok, Detail: fmt.Sprintf(format, args...)})
	r.OK = r.OK && ok
}

// HealthKey is the key under prefix that readiness writes (prefix +
// "health"); the command keeps it out of the ledger's prefix.
func HealthKey(prefix string) string { return prefix + "health" }

// Probe answers liveness and readiness from a Source. Its methods are safe
// for concurrent use.
type Probe struct {
	src          Source
	rdb          redis.UniversalClient
	redisKey     string
	redisTimeout time.Duration
	redisEvery   time.Duration
	health       *healthCache
	deps         []*healthCache // Dependency checks, in the order given
	wedged       time.Duration
	failing      int64
	group        string
	now          func() time.Time
}

// New returns a Probe over src.
func New(src Source, opts ...Opt) *Probe {
	p := &Probe{src: src, wedged: 2 * time.Minute, failing: 3, redisTimeout: 2 * time.Second, redisEvery: DefaultRedisInterval,
		now: time.Now}
	for _, o := range opts {
		o.apply(p)
	}
	p.health = &healthCache{name: "redis", what: "SET " + p.redisKey, run: p.setHealth}
	return p
}

// Live reports whether the pipeline runs and no partition's worker has
// been in one Redis or Kafka call longer than WedgedAfter. It costs one
// Stats call.
func (p *Probe) Live() Report {
	r := Report{OK: true}
	p.running(&r)
	now := p.now()
	var stuck []string
	for _, s := range p.src.Stats() {
		if s.Held && !s.BusySince.IsZero() && now.Sub(s.BusySince) > p.wedged {
			stuck = append(stuck, fmt.Sprintf("%s (in one call for %s)", s.Partition, now.Sub(s.BusySince).Round(time.Second)))
		}
	}
	if len(stuck) > 0 {
		r.add("workers", false, "wedged longer than %s: %s", p.wedged, strings.Join(stuck, ", "))
	} else {
		r.add("workers", true, "no call in flight longer than %s", p.wedged)
	}
	return r
}

// Ready reports whether the pipeline runs, has joined its group (assigned,
// or waiting for an assignment), Redis takes a write (with the Redis
// option), every Dependency answers, no held partition's commits failed
// FailingCommits times in a row and none is fenced. It costs one Stats call
// and, with Redis, at most one SET per RedisInterval (shared by the probes
// of that interval), and as much for each Dependency's ping.
func (p *Probe) Ready(ctx context.Context) Report {
	r := Report{OK: true}
	p.running(&r)
	member, gen := p.src.GroupMetadata()
	stats := p.src.Stats()
	held := 0
	var failing, fenced []string
	for _, s := range stats {
		if !s.Held {
			continue
		}
		held++
		if s.CommitFailures >= p.failing {
			failing = append(failing, fmt.Sprintf("%s (%d failed commits: %s)", s.Partition, s.CommitFailures, s.LastError))
		}
		if s.TermFenced {
			fenced = append(fenced, fmt.Sprintf("%s (epoch %d)", s.Partition, s.Epoch))
		}
	}
	switch {
	case member == "":
		r.add("group", false, "not joined yet")
	case held == 0:
		r.add("group", true, "member %s, generation %d: joined, waiting for an assignment", member, gen)
	default:
		r.add("group", true, "member %s, generation %d: %d partitions assigned", member, gen, held)
	}
	if p.rdb != nil {
		p.redis(ctx, &r)
	}
	for _, d := range p.deps {
		c := d.get(ctx, p.redisEvery, p.now)
		r.add(c.Name, c.OK, "%s", c.Detail)
	}
	if len(failing) > 0 {
		r.add("commits", false, "commits failing: %s", strings.Join(failing, ", "))
	} else {
		r.add("commits", true, "no partition with %d or more failed commits in a row", p.failing)
	}
	if len(fenced) > 0 {
		r.add("fence", false, "fenced, waiting for the group to take them back: %s", strings.Join(fenced, ", "))
	} else {
		r.add("fence", true, "no partition fenced")
	}
	return r
}

func (p *Probe) running(r *Report) {
	if err := p.src.Err(); err != nil {
		r.add("pipeline", false, "stopped: %v", err)
		return
	}
	r.add("pipeline", true, "running")
}

func (p *Probe) redis(ctx context.Context, r *Report) {
	c := p.health.get(ctx, p.redisEvery, p.now)
	r.add(c.Name, c.OK, "%s", c.Detail)
}

// setHealth writes the readiness key within redisTimeout.
func (p *Probe) setHealth(ctx context.Context) Check {
	ctx, cancel := context.WithTimeout(ctx, p.redisTimeout)
	defer cancel()
	start := p.now()
	if err := p.rdb.Set(ctx, p.redisKey, start.UTC().Format(time.RFC3339Nano), 10*time.Second).Err(); err != nil {
		return Check{Name: "redis", Detail: fmt.Sprintf("SET %s failed: %v", p.redisKey, err)}
	}
	return Check{Name: "redis", OK: true, Detail: fmt.Sprintf("SET %s in %s", p.redisKey, p.now().Sub(start).Round(time.Microsecond))}
}
