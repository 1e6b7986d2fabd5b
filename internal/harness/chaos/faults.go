package chaos

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/shardpipe/shardpipe/internal/harness/chaoscheck"
)

// do performs one scheduled fault, and checks that it had an effect one
// can observe; a fault without one is a problem of the run (it tested
// nothing).
func (r *runner) do(ctx context.Context, s step) error {
	if r.cfg.Cluster != nil && (s.Kind == faultRedis || s.Kind == faultBroker) {
		return r.clusterFault(ctx, s)
	}
	switch s.Kind {
	case faultKill:
		// The consumer holding the most landed, uncommitted records (on a
		// loaded machine the slot's own may just have restarted and hold
		// none), so that the kill leaves work to replay.
		c := r.holding(ctx, s.Slot)
		held := r.awaitHolding(ctx, c, 5*time.Second)
		r.logf("SIGKILL %s, holding %d landed records not yet committed; restart in %v", c, held, s.Down)
		if err := r.kill(c); err != nil {
			return err
		}
		if err := c.wait(10 * time.Second); err != nil {
			return err
		}
		r.faults.Kills++
		if held > 0 {
			r.faults.KillsHolding++
		} else {
			r.noEffect("SIGKILL of %s: it held no landed, uncommitted record (none within 5s), so nothing was replayed", c)
		}
		if err := sleep(ctx, s.Down); err != nil {
			return err
		}
		return r.startSlot(c.slot)
	case faultZombie:
		c := r.holding(ctx, s.Slot)
		if r.protocol == "classic" {
			// A classic group in a rebalance waits for a silent member up to
			// the rebalance timeout, not the session timeout: a pause then
			// would not make a zombie. Pause it in a stable group.
			r.awaitStable(ctx, 30*time.Second)
		}
		held := r.awaitHolding(ctx, c, 5*time.Second)
		r.logf("SIGSTOP %s, holding %d landed records not yet committed, for %v (past its session timeout), then SIGCONT",
			c, held, r.cfg.ZombiePause)
		stopAt := time.Now()
		if err := c.signal(syscall.SIGSTOP); err != nil {
			return err
		}
		r.stops = append(r.stops, chaoscheck.Kill{Consumer: c.id, At: stopAt})
		r.faults.ZombiePauses++
		member := c.member()
		err := sleep(ctx, r.cfg.ZombiePause)
		if err == nil && r.protocol == "classic" {
			err = r.awaitEvicted(ctx, c, member)
		}
		from := c.logSize()
		woke := time.Now()
		if cerr := c.signal(syscall.SIGCONT); cerr != nil && err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
		// Woken past its session timeout, it must find itself fenced out: its
		// partitions lost, or a commit of the old term refused.
		msg := c.waitLog(ctx, from, 30*time.Second, "partitions lost", "commit refused: this worker no longer owns the partition",
			"revoke timeout: fencing a worker still holding a batch",
			"revoke timeout: the partition moves on while its old worker, its final commit made, still marks done effects that ran (until their leases would lapse)")
		switch {
		case held == 0:
			r.noEffect("zombie %s held no landed, uncommitted record when stopped", c)
		case msg == "":
			r.noEffect("zombie %s: no sign within 30s of SIGCONT that it was fenced out (partitions lost, commit refused)", c)
			r.moments = append(r.moments, moment{why: fmt.Sprintf("zombie %s woken, not seen fenced out", c), c: c,
				from: woke.Add(-r.cfg.ZombiePause - time.Second), to: woke.Add(30 * time.Second)})
		default:
			r.faults.ZombiesFenced++
			r.logf("zombie %s woke fenced out: %q", c, msg)
		}
		return nil
	case faultRedis:
		before, err := r.markRedis(ctx)
		if err != nil {
			return err
		}
		r.logf("SIGKILL redis; restart in %v (appendonly yes, appendfsync always)", s.Down)
		if err := r.cfg.Services.Kill(ctx, "redis"); err != nil {
			return err
		}
		down := chaoscheck.Window{From: time.Now()}
		r.faults.RedisRestarts++
		if err := sleep(ctx, s.Down); err != nil {
			return err
		}
		down.To = time.Now()
		r.redisDown = append(r.redisDown, down)
		if err := r.cfg.Services.Restart(ctx, "redis"); err != nil {
			return err
		}
		if r.redisRecovered(ctx, "redis crash", before) {
			r.faults.RedisRecovered++
		}
		return nil
	case faultRedisOutage:
		return r.redisOutage(ctx, r.cfg.Guard.RedisOutage)
	case faultPostgres:
		return r.postgresRestart(ctx, s.Slot, s.Down)
	case faultBroker:
		_, p0 := r.watcher.Decreases()
		r.logf("stopping the broker; start again %v after it exited", s.Down)
		if err := r.cfg.Services.Stop(ctx, "kafka"); err != nil {
			return err
		}
		r.faults.BrokerRestarts++
		if err := sleep(ctx, s.Down); err != nil {
			return err
		}
		if err := r.cfg.Services.Restart(ctx, "kafka"); err != nil {
			return err
		}
		_, p1 := r.watcher.Decreases()
		r.logf("broker back")
		// Seen from outside: the watcher's polls failed while it was down,
		// and read the group's offsets again once it is back.
		seen := r.awaitPolls(ctx, p1.Seen+1, 30*time.Second)
		if p1.Failed > p0.Failed && seen {
			r.faults.BrokerOutagesSeen++
		} else {
			r.noEffect("broker restart: the watcher's polls failed %d times while it was down, and it read the offsets again after: %t",
				p1.Failed-p0.Failed, seen)
		}
		return nil
	}
	return fmt.Errorf("chaos: unknown fault %v", s.Kind)
}

// redisOutage SIGKILLs Redis while guard-mode effects are in flight and
// keeps it down for outage after their replies: the receiver holds the
// replies of the calls under way (their claims pending in Redis), Redis is
// killed, then the replies go out, so each of those effects has run and its
// done write meets a Redis that stays down past the sink's retry budget.
func (r *runner) redisOutage(ctx context.Context, outage time.Duration) error {
	var before redisMark
	if r.cfg.Cluster == nil { // on a cluster the shard is marked when it is killed
		var err error
		if before, err = r.markRedis(ctx); err != nil {
			return err
		}
	}
	if err := r.recv.control(ctx, "hold"); err != nil {
		return err
	}
	released := false
	defer func() {
		if !released {
			_ = r.recv.control(context.WithoutCancel(ctx), "release")
		}
	}()
	// Wait for a call to arrive (at most 10s), then up to 2s more for one per
	// partition: each partition's worker blocks in its call, so the outage
	// strands effects of every consumer, not only of the first to call.
	deadline, first := time.Now().Add(10*time.Second), time.Time{}
	for {
		st, err := r.recv.stats(ctx)
		if err != nil {
			return err
		}
		if st.Held > 0 && first.IsZero() {
			first = time.Now()
		}
		if st.Held >= r.cfg.Partitions || !first.IsZero() && time.Since(first) > 2*time.Second ||
			first.IsZero() && time.Now().After(deadline) {
			break
		}
		if err := sleep(ctx, 20*time.Millisecond); err != nil { // polls the receiver; no event to wait on
			return err
		}
	}
	if r.cfg.Cluster != nil {
		var err error
		if before, err = r.shardOutage(ctx); err != nil {
			return err
		}
	} else if err := r.cfg.Services.Kill(ctx, "redis"); err != nil {
		return err
	}
	down := chaoscheck.Window{From: time.Now()}
	st, err := r.recv.stats(ctx)
	if err != nil {
		return err
	}
	released = true
	if err := r.recv.control(ctx, "release"); err != nil {
		return err
	}
	r.faults.RedisOutages++
	what := "redis"
	if r.cfg.Cluster != nil {
		what = fmt.Sprintf("redis cluster node %d and its replica (every write refused while the shard is down)", before.node)
	}
	r.logf("SIGKILLed %s with %d effect calls in flight, answered once it was gone; restart in %v (past the sink's retry budget)",
		what, st.Held, outage)
	if st.Held == 0 {
		r.noEffect("redis outage: no effect call was in flight (none within 10s)")
	}
	if err := sleep(ctx, outage); err != nil {
		return err
	}
	down.To = time.Now()
	r.redisDown = append(r.redisDown, down)
	if r.cfg.Cluster != nil {
		if err := r.cfg.Cluster.redis.Start(ctx); err != nil {
			return err
		}
		r.logf("redis back after %v down", time.Since(down.From).Round(time.Millisecond))
		r.clusterRecovered(ctx, "redis outage", before, 0)
		return nil
	}
	if err := r.cfg.Services.Restart(ctx, "redis"); err != nil {
		return err
	}
	r.logf("redis back after %v down", time.Since(down.From).Round(time.Millisecond))
	r.redisRecovered(ctx, "redis outage", before)
	return nil
}

// redisMark is what the run left in Redis just before killing it.
type redisMark struct {
	runID string
	key   string
	node  int // on a cluster: the master the fault hit
}

// markRedis writes a marker key (appendfsync always: durable when
// acknowledged) and reads the server's run ID.
func (r *runner) markRedis(ctx context.Context) (redisMark, error) {
	rdb := redis.NewClient(&redis.Options{Addr: r.cfg.Services.Redis()})
	defer rdb.Close()
	m := redisMark{key: fmt.Sprintf("%s:chaos-marker:%d", r.topic, time.Now().UnixNano())}
	id, err := serverRunID(ctx, rdb)
	if err == nil {
		err = rdb.Set(ctx, m.key, id, 0).Err()
	}
	m.runID = id
	if err != nil {
		return m, fmt.Errorf("chaos: mark redis before the fault: %w", err)
	}
	return m, nil
}

// redisRecovered checks the fault's effect: a new Redis process (another
// run ID) that kept the marker written before the kill (the AOF), and on
// which the consumers write again within 30s (its key count grows). A
// failed check is a problem of the run.
func (r *runner) redisRecovered(ctx context.Context, what string, before redisMark) bool {
	rdb := redis.NewClient(&redis.Options{Addr: r.cfg.Services.Redis()})
	defer rdb.Close()
	id, err := serverRunID(ctx, rdb)
	if err != nil || id == before.runID {
		r.noEffect("%s: the restarted redis has run ID %q (%v), the killed one had %q: not a new process", what, id, err, before.runID)
		return false
	}
	if got, err := rdb.Get(ctx, before.key).Result(); err != nil || got != before.runID {
		r.noEffect("%s: the marker written before the kill reads %q (%v) after the restart: the AOF lost it", what, got, err)
		return false
	}
	n0, err := rdb.DBSize(ctx).Result()
	deadline := time.Now().Add(30 * time.Second)
	for err == nil {
		var n int64
		if n, err = rdb.DBSize(ctx).Result(); err == nil && n > n0 {
			return true
		}
		if time.Now().After(deadline) {
			break
		}
		err = sleep(ctx, 50*time.Millisecond) // polls the key count; no event to wait on
	}
	r.noEffect("%s: no new key in redis within 30s of its restart (%v): the consumers did not resume", what, err)
	return false
}

func serverRunID(ctx context.Context, rdb *redis.Client) (string, error) {
	info, err := rdb.Info(ctx, "server").Result()
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "run_id:"); ok {
			return v, nil
		}
	}
	return "", errors.New("INFO server has no run_id")
}

// awaitPolls waits until the watcher has read the committed offsets seen
// times in all, at most d.
func (r *runner) awaitPolls(ctx context.Context, seen int, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for {
		if _, p := r.watcher.Decreases(); p.Seen >= seen {
			return true
		}
		if time.Now().After(deadline) || sleep(ctx, 25*time.Millisecond) != nil { // polls the watcher's count
			return false
		}
	}
}

// awaitStable waits, at most d, until the classic group is Stable with one
// member per running consumer (a killed one's membership has expired).
func (r *runner) awaitStable(ctx context.Context, d time.Duration) {
	deadline := time.Now().Add(d)
	for {
		live := 0
		for _, c := range r.slots {
			if !c.exited() {
				live++
			}
		}
		dctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		gs, err := r.adm.DescribeGroups(dctx, r.group)
		cancel()
		if g, ok := gs[r.group]; err == nil && ok && g.Err == nil && g.State == "Stable" && len(g.Members) == live {
			return
		}
		if time.Now().After(deadline) {
			r.logf("the group is not stable with %d members after %v (%v); pausing the zombie anyway", live, d, err)
			return
		}
		if sleep(ctx, 100*time.Millisecond) != nil { // polls the group's state; no event to wait on
			return
		}
	}
}

// awaitEvicted keeps the stopped zombie c stopped until the group has
// dropped its member (its session expired) and rebalanced without it, at
// most a minute more: a zombie woken before that would be no zombie, and
// the run would wait in vain for a sign that it was fenced out.
func (r *runner) awaitEvicted(ctx context.Context, c *consumer, member string) error {
	if member == "" {
		r.logf("%s logged no member ID; waking it after %v without checking that the group dropped it", c, r.cfg.ZombiePause)
		return nil
	}
	start := time.Now()
	deadline := start.Add(time.Minute)
	for {
		dctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		gs, err := r.adm.DescribeGroups(dctx, r.group)
		cancel()
		if g, ok := gs[r.group]; err == nil && ok && g.Err == nil && g.State == "Stable" {
			if !slices.ContainsFunc(g.Members, func(m kadm.DescribedGroupMember) bool { return m.MemberID == member }) {
				if waited := time.Since(start); waited > time.Second {
					r.logf("the group dropped %s's member %s %v after its pause ended; waking it now", c, member, waited.Round(100*time.Millisecond))
				}
				return nil
			}
		}
		if time.Now().After(deadline) {
			r.noEffect("the group did not drop %s's member %s within a minute past its pause (%v): it is woken a member", c, member, err)
			return nil
		}
		if err := sleep(ctx, 100*time.Millisecond); err != nil { // polls the group; no event to wait on
			return err
		}
	}
}

// awaitHolding scrapes c until it holds landed, uncommitted records (at
// most d) and returns how many.
func (r *runner) awaitHolding(ctx context.Context, c *consumer, d time.Duration) int64 {
	hc := &http.Client{Timeout: time.Second}
	deadline := time.Now().Add(d)
	for {
		c.scrape(ctx, hc)
		c.mu.Lock()
		n := c.scraped.uncommitted
		c.mu.Unlock()
		if n > 0 || c.exited() || time.Now().After(deadline) || sleep(ctx, 50*time.Millisecond) != nil {
			return n
		}
	}
}

// kill SIGKILLs c and records it for the checker.
func (r *runner) kill(c *consumer) error {
	at := time.Now()
	if err := c.signal(syscall.SIGKILL); err != nil {
		return err
	}
	r.kills = append(r.kills, chaoscheck.Kill{Consumer: c.id, At: at})
	return nil
}

// noEffect records a fault that had no observable effect.
func (r *runner) noEffect(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	r.logf("no effect: %s", msg)
	r.problems = append(r.problems, "fault without an observable effect: "+msg)
}

// target is the consumer of slot, or of the next slot that is running and
// not paused (there is always one: faults run one at a time).
func (r *runner) target(slot int) *consumer {
	for i := range r.slots {
		c := r.slots[(slot+i)%len(r.slots)]
		c.mu.Lock()
		paused := c.paused
		c.mu.Unlock()
		if !paused && !c.exited() {
			return c
		}
	}
	return r.slots[slot]
}

// holding is the running consumer holding the most landed but uncommitted
// records right now (by a fresh metrics scrape), so that a killed consumer
// leaves work to replay and a zombie wakes holding work; when none holds any it scrapes again, for up to 5s, then
// settles for slot's consumer.
func (r *runner) holding(ctx context.Context, slot int) *consumer {
	best := r.target(slot)
	hc := &http.Client{Timeout: time.Second}
	deadline := time.Now().Add(5 * time.Second)
	for {
		most := int64(0)
		for _, c := range r.slots {
			if c.exited() {
				continue
			}
			c.scrape(ctx, hc)
			c.mu.Lock()
			n := c.scraped.uncommitted
			c.mu.Unlock()
			if n > most {
				best, most = c, n
			}
		}
		if most > 0 || time.Now().After(deadline) || sleep(ctx, 50*time.Millisecond) != nil {
			return best
		}
	}
}

// revive restarts every consumer that exited without the driver's doing,
// and records each such exit: a shardpipe process must survive the faults.
func (r *runner) revive() error {
	for i, c := range r.slots {
		c.mu.Lock()
		signaled := c.signaled
		c.mu.Unlock()
		if !c.exited() || signaled {
			continue
		}
		r.problems = append(r.problems, fmt.Sprintf("%s exited on its own (%v); its log ends:\n%s", c, c.err, tail(c.logPath, 5)))
		r.logf("%s exited on its own (%v); restarting it", c, c.err)
		if err := r.startSlot(i); err != nil {
			return err
		}
	}
	return nil
}

// startSlot starts a new instance in slot with the phase's protocol.
func (r *runner) startSlot(slot int) error {
	r.instance++
	var env []string
	if r.sql {
		env = []string{"SHARDPIPE_SQL_PASSWORD=" + r.sqlPassword}
	}
	c, err := startConsumer(r.cfg.Bin, r.cfg.WorkDir, slot, r.instance, r.protocol, r.runArgs(slot), env...)
	if err != nil {
		return err
	}
	r.slots[slot] = c
	r.mu.Lock()
	r.all = append(r.all, c)
	r.mu.Unlock()
	return nil
}

// stopAll sends SIGTERM to every running consumer and waits for each; a
// graceful stop must exit 0.
func (r *runner) stopAll() {
	for _, c := range r.slots {
		if c != nil && !c.exited() {
			// `run` handles SIGTERM from the moment its pipeline starts; a
			// consumer restarted a moment ago may still be in its checks.
			if err := c.waitStarted(time.Minute); err != nil {
				r.problems = append(r.problems, err.Error())
			}
			_ = c.signal(syscall.SIGTERM)
		}
	}
	for _, c := range r.slots {
		if c == nil {
			continue
		}
		if err := c.wait(time.Minute); err != nil {
			r.problems = append(r.problems, err.Error())
			_ = r.kill(c)
			<-c.done
			continue
		}
		if c.err != nil && !r.killed(c) {
			r.problems = append(r.problems, fmt.Sprintf("%s: SIGTERM gave %v, want exit 0; its log ends:\n%s", c, c.err, tail(c.logPath, 5)))
		}
	}
}

// killed reports whether c's exit status is a SIGKILL the driver sent.
func (r *runner) killed(c *consumer) bool {
	st, ok := c.cmd.ProcessState.Sys().(syscall.WaitStatus)
	return ok && st.Signaled() && st.Signal() == syscall.SIGKILL
}

// tail returns the last n lines of the file at path.
func tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
