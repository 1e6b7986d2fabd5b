// Command kafkaready waits until a Kafka broker answers a Metadata request,
// then prints the broker's version as the broker reports it (ApiVersions).
// scripts/services.sh uses it as its readiness check, so that no fixed sleep is needed.
//
//	go run ./internal/harness/cmd/kafkaready -brokers 127.0.0.1:39092 -timeout 120s [-pidfile FILE[,FILE...]] [-min-brokers N]
//
// It exits 0 once ready (with -min-brokers, once the metadata lists that many
// brokers: a cluster whose nodes have all registered), 1 when the deadline
// passes or a process named in -pidfile has died (there is then no point in
// waiting).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/shardpipe/shardpipe/internal/kafkainfo"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

func main() {
	brokers := flag.String("brokers", "127.0.0.1:9092", "comma-separated seed brokers")
	timeout := flag.Duration("timeout", 2*time.Minute, "give up after this long")
	pidfile := flag.String("pidfile", "", "optional: fail fast when the process in this pid file (or any of a comma-separated list) has exited")
	minBrokers := flag.Int("min-brokers", 1, "wait until the metadata lists at least this many brokers")
	flag.Parse()

	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	if err := wait(ctx, strings.Split(*brokers, ","), *pidfile, *minBrokers); err != nil {
		fmt.Fprintln(os.Stderr, "kafkaready:", err)
		os.Exit(1)
	}
}

func wait(ctx context.Context, seeds []string, pidfile string, minBrokers int) error {
	var lastErr error
	for {
		for _, f := range strings.Split(pidfile, ",") {
			if f != "" && !processAlive(f) {
				return fmt.Errorf("the process in %s has exited (last error: %v)", f, lastErr)
			}
		}
		// A client per attempt: kadm serves broker metadata from the
		// client's cache, which would keep listing the brokers of the
		// first answer while the others register.
		cl, err := kgo.NewClient(
			kgo.SeedBrokers(seeds...),
			kgo.DialTimeout(2*time.Second),
			kgo.RequestRetries(0),
			kgo.RetryTimeout(time.Second),
		)
		if err != nil {
			return err
		}
		adm := kadm.NewClient(cl)
		attempt, cancel := context.WithTimeout(ctx, 3*time.Second)
		m, err := adm.BrokerMetadata(attempt)
		if err == nil && len(m.Brokers) < max(minBrokers, 1) {
			err = fmt.Errorf("metadata lists %d broker(s), want %d", len(m.Brokers), max(minBrokers, 1))
		}
		var version string
		if err == nil {
			version, err = kafkainfo.BrokerVersion(attempt, adm)
		}
		cancel()
		cl.Close()
		if err == nil {
			fmt.Printf("cluster %s, %d broker(s), %s\n", m.Cluster, len(m.Brokers), version)
			return nil
		}
		lastErr = err
		select {
		case <-ctx.Done():
			return fmt.Errorf("broker not ready before the deadline: %v", lastErr)
		case <-time.After(200 * time.Millisecond): // poll interval, not a fixed wait
		}
	}
}

func processAlive(pidfile string) bool {
	b, err := os.ReadFile(pidfile)
	if err != nil {
		return false
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 {
		return false
	}
	return syscall.Kill(pid, 0) == nil
}
