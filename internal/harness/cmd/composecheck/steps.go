package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/shardpipe/shardpipe/internal/harness/chaoscheck"
)

// config is composecheck's flags.
type config struct {
	compose, project, file, override string
	timeout                          time.Duration
	keep                             bool
}

// What docker-compose.yml names, seen from the host through the override.
const (
	brokers      = "127.0.0.1:9092"
	redisAddr    = "127.0.0.1:6379"
	topic        = "orders"
	group        = "shardpipe"
	gracePeriod  = 40 * time.Second // the shardpipe service's stop_grace_period
	drainTimeout = 3 * time.Minute
)

// check runs the stack through its steps and returns the summary line.
func (c config) check(ctx context.Context) (sum string, err error) {
	start := time.Now()
	s := stack{compose: c.compose, args: []string{"-p", c.project, "-f", c.file, "-f", c.override}}
	if _, err := s.run(ctx, "down", "-v", "--remove-orphans"); err != nil {
		return "", fmt.Errorf("clearing an earlier run: %w", err)
	}
	if !c.keep {
		defer func() {
			dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Minute)
			defer cancel()
			if _, derr := s.run(dctx, "down", "-v", "--remove-orphans"); derr != nil && err == nil {
				err = fmt.Errorf("compose down: %w", derr)
			}
		}()
	}
	verifyCfg := chaoscheck.Config{Brokers: []string{brokers}, Redis: redisAddr, Topic: topic, DLQTopic: topic + ".dlq",
		Group: group, LedgerPrefix: "shardpipe:ledger:", TotalsHash: "shardpipe:totals"}

	t := time.Now()
	if err := s.upHealthy(ctx); err != nil {
		return "", err
	}
	upTook := time.Since(t)
	adm, err := newAdmin([]string{brokers})
	if err != nil {
		return "", err
	}
	defer adm.Close()

	// 1. 10,000 orders with 10% re-sends, drained, exact.
	t = time.Now()
	if _, err := s.run(ctx, "--profile", "produce", "run", "--rm", "-T", "producer"); err != nil {
		return "", fmt.Errorf("producing: %w", err)
	}
	produceTook := time.Since(t)
	t = time.Now()
	if _, err := awaitProgress(ctx, adm, group, topic, drainTimeout, func(p progress) bool { return p.end > 0 && p.lag() == 0 }); err != nil {
		return "", fmt.Errorf("draining the first 10,000 orders: %w", err)
	}
	drainTook := time.Since(t)
	first, err := verify(ctx, verifyCfg)
	if err != nil {
		return "", fmt.Errorf("after the first 10,000 orders: %w", err)
	}

	// 2. docker compose stop: SIGTERM drains and commits within stop_grace_period.
	id, err := s.containerID(ctx, "shardpipe")
	if err != nil {
		return "", err
	}
	t = time.Now()
	if _, err := s.run(ctx, "stop", "shardpipe"); err != nil {
		return "", fmt.Errorf("stopping shardpipe: %w", err)
	}
	stopTook := time.Since(t)
	st, err := inspect(ctx, id)
	if err != nil {
		return "", err
	}
	if st.Status != "exited" || st.ExitCode != 0 || stopTook >= gracePeriod {
		return "", fmt.Errorf("docker compose stop shardpipe: status %s, exit code %d after %v (want exited, 0, under %v)",
			st.Status, st.ExitCode, stopTook.Round(time.Millisecond), gracePeriod)
	}
	p, err := groupProgress(ctx, adm, group, topic)
	if err != nil {
		return "", err
	}
	if p.lag() != 0 {
		return "", fmt.Errorf("after docker compose stop shardpipe: lag %d (committed %d of %d), want 0", p.lag(), p.committed, p.end)
	}

	// 3. Up again, 10,000 more orders, docker kill mid-stream, restart: still exact.
	if err := s.upHealthy(ctx); err != nil {
		return "", fmt.Errorf("after the stop: %w", err)
	}
	base := p.end
	producing := make(chan error, 1)
	go func() {
		_, err := s.run(ctx, "--profile", "produce", "run", "--rm", "-T", "producer")
		producing <- err
	}()
	// Kill once shardpipe has committed part of the new orders.
	if p, err = awaitProgress(ctx, adm, group, topic, drainTimeout, func(p progress) bool { return p.committed > base+1000 }); err != nil {
		return "", fmt.Errorf("waiting for the second run to commit: %w", err)
	}
	killedAt := p.committed - base
	if _, err := run(ctx, "docker", "kill", id); err != nil {
		return "", fmt.Errorf("docker kill shardpipe: %w", err)
	}
	if st, err = inspect(ctx, id); err != nil {
		return "", err
	}
	killCode := st.ExitCode
	t = time.Now()
	if err := s.upHealthy(ctx); err != nil {
		return "", fmt.Errorf("restarting after docker kill: %w", err)
	}
	restartTook := time.Since(t)
	if err := <-producing; err != nil {
		return "", fmt.Errorf("producing the second 10,000: %w", err)
	}
	if _, err := awaitProgress(ctx, adm, group, topic, drainTimeout, func(p progress) bool { return p.lag() == 0 }); err != nil {
		return "", fmt.Errorf("draining after the restart: %w", err)
	}
	second, err := verify(ctx, verifyCfg)
	if err != nil {
		return "", fmt.Errorf("after docker kill and restart: %w", err)
	}
	if second.unique <= first.unique {
		return "", fmt.Errorf("the second run added no orders: %d unique before, %d after", first.unique, second.unique)
	}
	return strings.Join([]string{
		fmt.Sprintf("compose PASS in %v: up+healthy %v", time.Since(start).Round(time.Second), upTook.Round(100*time.Millisecond)),
		fmt.Sprintf("produce %v, drained %v later (%v)", produceTook.Round(100*time.Millisecond), drainTook.Round(100*time.Millisecond), first),
		fmt.Sprintf("compose stop shardpipe %v (exit 0, lag 0)", stopTook.Round(100*time.Millisecond)),
		fmt.Sprintf("docker kill at %d committed (exit %d), healthy again in %v (%v)", killedAt, killCode, restartTook.Round(100*time.Millisecond), second),
	}, ", "), nil
}

// upHealthy brings the stack up (no pulls: every image is local) and waits
// until the shardpipe service's healthcheck passes.
func (s stack) upHealthy(ctx context.Context) error {
	if _, err := s.run(ctx, "up", "-d", "--pull", "never", "--wait", "--wait-timeout", "300", "shardpipe"); err != nil {
		return fmt.Errorf("compose up: %w", err)
	}
	id, err := s.containerID(ctx, "shardpipe")
	if err != nil {
		return err
	}
	st, err := inspect(ctx, id)
	if err != nil {
		return err
	}
	if st.Status != "running" || st.Health != "healthy" {
		return fmt.Errorf("after compose up --wait, shardpipe is %s (health %q), want running and healthy", st.Status, st.Health)
	}
	return nil
}
