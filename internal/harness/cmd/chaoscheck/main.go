// Command chaoscheck is the independent checker of a shardpipe chaos run
// (see package internal/harness/chaoscheck for what it verifies, and its
// independence rule: no shardpipe package is imported here either).
//
//	go run ./internal/harness/cmd/chaoscheck -brokers 127.0.0.1:9092 -redis 127.0.0.1:6379 \
//	    -topic orders -group shardpipe -dlq-topic orders.dlq \
//	    -ledger-prefix shardpipe:ledger: -totals-hash shardpipe:totals [-watch]
//
// For a guard-mode run (`shardpipe run --effect http` against the chaos
// receiver), -calls names the receiver's calls file and -totals-hash is
// not read; a second run of a key is then always a violation, since this
// command does not know which consumers were killed.
//
// With -watch it first polls the group's committed offsets until SIGINT or
// SIGTERM, recording any that go backwards, then verifies. It prints the
// violations and one line of figures, and exits 1 on any violation, 2 when
// it cannot read what it must judge.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/shardpipe/shardpipe/internal/harness/chaoscheck"
)

func main() {
	var cfg chaoscheck.Config
	brokers := flag.String("brokers", "127.0.0.1:9092", "comma-separated seed brokers")
	flag.StringVar(&cfg.Redis, "redis", "127.0.0.1:6379", "Redis host:port of the ledger")
	flag.StringVar(&cfg.Topic, "topic", "", "source topic (required)")
	flag.StringVar(&cfg.Group, "group", "", "consumer group (required)")
	flag.StringVar(&cfg.DLQTopic, "dlq-topic", "", "dead-letter topic (empty: none; poison records are then violations)")
	flag.StringVar(&cfg.LedgerPrefix, "ledger-prefix", "shardpipe:ledger:", "prefix of the ledger keys")
	flag.StringVar(&cfg.TotalsHash, "totals-hash", "shardpipe:totals", "the totals hash (not read with -calls)")
	flag.StringVar(&cfg.CallLog, "calls", "", "guard mode: the chaos receiver's calls file (empty: the run used --effect totals)")
	watch := flag.Bool("watch", false, "watch committed offsets until SIGINT/SIGTERM, then verify")
	timeout := flag.Duration("timeout", 5*time.Minute, "give up reading after this long")
	flag.Parse()
	cfg.Brokers = strings.Split(*brokers, ",")
	if cfg.CallLog != "" {
		cfg.TotalsHash = ""
	}
	if cfg.Topic == "" || cfg.Group == "" || flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "chaoscheck: -topic and -group are required, and no arguments are taken")
		os.Exit(2)
	}
	var w *chaoscheck.Watcher
	if *watch {
		var err error
		if w, err = chaoscheck.NewWatcher(cfg.Brokers, cfg.Group, cfg.Topic); err != nil {
			fmt.Fprintln(os.Stderr, "chaoscheck:", err)
			os.Exit(2)
		}
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		fmt.Fprintln(os.Stderr, "chaoscheck: watching committed offsets; SIGINT or SIGTERM to verify")
		w.Run(ctx, 25*time.Millisecond)
		stop()
	}
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	r, err := chaoscheck.Verify(ctx, cfg, w, chaoscheck.Faults{})
	if err != nil {
		fmt.Fprintln(os.Stderr, "chaoscheck:", err)
		os.Exit(2)
	}
	fmt.Println(r)
	if !r.OK() {
		os.Exit(1)
	}
}
