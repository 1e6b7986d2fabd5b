package chaos

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"
	"syscall"
	"time"
)

// do performs one scheduled fault.
func (r *runner) do(ctx context.Context, s step) error {
	switch s.Kind {
	case faultKill:
		c := r.target(s.Slot)
		r.logf("SIGKILL %s; restart in %v", c, s.Down)
		if err := c.signal(syscall.SIGKILL); err != nil {
			return err
		}
		if err := c.wait(10 * time.Second); err != nil {
			return err
		}
		r.faults.Kills++
		if err := sleep(ctx, s.Down); err != nil {
			return err
		}
		return r.startSlot(c.slot)
	case faultZombie:
		c := r.holding(ctx, s.Slot)
		c.mu.Lock()
		held := c.scraped.uncommitted
		c.mu.Unlock()
		r.logf("SIGSTOP %s, holding %d landed records not yet committed, for %v (past its session timeout), then SIGCONT",
			c, held, r.cfg.ZombiePause)
		if err := c.signal(syscall.SIGSTOP); err != nil {
			return err
		}
		r.faults.ZombiePauses++
		err := sleep(ctx, r.cfg.ZombiePause)
		if cerr := c.signal(syscall.SIGCONT); cerr != nil && err == nil {
			err = cerr
		}
		return err
	case faultRedis:
		r.logf("SIGKILL redis; restart in %v (appendonly yes, appendfsync always)", s.Down)
		if err := r.cfg.Services.Kill(ctx, "redis"); err != nil {
			return err
		}
		r.faults.RedisRestarts++
		if err := sleep(ctx, s.Down); err != nil {
			return err
		}
		return r.cfg.Services.Start(ctx, "redis")
	case faultBroker:
		r.logf("stopping the broker; start again %v after it exited", s.Down)
		if err := r.cfg.Services.Stop(ctx, "kafka"); err != nil {
			return err
		}
		r.faults.BrokerRestarts++
		if err := sleep(ctx, s.Down); err != nil {
			return err
		}
		err := r.cfg.Services.Start(ctx, "kafka")
		r.logf("broker back")
		return err
	}
	return fmt.Errorf("chaos: unknown fault %v", s.Kind)
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
// records right now (by a fresh metrics scrape), so that the zombie wakes
// holding work; slot's consumer when none holds any.
func (r *runner) holding(ctx context.Context, slot int) *consumer {
	best := r.target(slot)
	hc := &http.Client{Timeout: time.Second}
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
	return best
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
	c, err := startConsumer(r.cfg.Bin, r.cfg.WorkDir, slot, r.instance, r.protocol, r.runArgs())
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
			_ = c.signal(syscall.SIGKILL)
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
