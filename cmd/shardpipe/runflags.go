package main

import (
	"time"

	"github.com/urfave/cli/v3"
)

// Flag names of run. Each is also read from envName(name).
const (
	fBrokers         = "brokers"
	fTopic           = "topic"
	fGroup           = "group"
	fRedis           = "redis"
	fRedisCluster    = "redis-cluster"
	fLedgerPrefix    = "ledger-prefix"
	fTTL             = "ttl"
	fKeyFrom         = "key-from"
	fEffect          = "effect"
	fTotalsHash      = "totals-hash"
	fTotalsGroup     = "totals-group-field"
	fTotalsAmount    = "totals-amount-field"
	fCommitEvery     = "commit-every"
	fCommitInterval  = "commit-interval"
	fMaxUncommitted  = "max-uncommitted"
	fMaxBatch        = "max-batch"
	fGroupProtocol   = "group-protocol"
	fStart           = "start"
	fOnPoison        = "on-poison"
	fDLQTopic        = "dlq-topic"
	fPoisonAttempts  = "poison-attempts"
	fDLQPrefix       = "dlq-prefix"
	fSessionTimeout  = "session-timeout"
	fShutdownTimeout = "shutdown-timeout"
	fConnectTimeout  = "connect-timeout"
	fReportInterval  = "report-interval"
	fMetricsAddr     = "metrics-addr"
	fLogFormat       = "log-format"
	fLogLevel        = "log-level"
)

// runFlags returns run's flags, in the order of the README's table.
func runFlags() []cli.Flag {
	fs := []cli.Flag{
		brokersFlag(),
		&cli.StringSliceFlag{Name: fTopic, Sources: fromEnv(fTopic),
			Usage: "topic to consume; repeat the flag or separate with commas (required)"},
		groupFlag(),
	}
	fs = append(fs, ledgerFlags()...)
	fs = append(fs, httpFlags()...)
	fs = append(fs, durabilityFlags()...)
	fs = append(fs, commitFlags()...)
	fs = append(fs,
		&cli.StringFlag{Name: fGroupProtocol, Value: "classic", Sources: fromEnv(fGroupProtocol),
			Usage: "consumer group protocol: classic, or consumer (KIP-848, Kafka 4.0+)"},
		&cli.StringFlag{Name: fStart, Value: "earliest", Sources: fromEnv(fStart),
			Usage: "where a group with no committed offset starts: earliest or latest"})
	fs = append(fs, poisonFlags()...)
	fs = append(fs, operateFlags()...)
	return append(fs,
		&cli.DurationFlag{Name: fSessionTimeout, Value: 45 * time.Second, Sources: fromEnv(fSessionTimeout),
			Usage: "classic protocol: a member that stops heartbeating (a killed process) leaves the group after this; the broker's group.min/max.session.timeout.ms bound it"},
		&cli.DurationFlag{Name: fShutdownTimeout, Value: 30 * time.Second, Sources: fromEnv(fShutdownTimeout),
			Usage: "on SIGINT or SIGTERM: how long to drain and commit before leaving the group"},
		connectTimeoutFlag(),
		&cli.DurationFlag{Name: fReportInterval, Value: 10 * time.Second, Sources: fromEnv(fReportInterval),
			Usage: "how often to log a one-line progress summary (0: never)"},
		&cli.StringFlag{Name: fMetricsAddr, Sources: fromEnv(fMetricsAddr),
			Usage: "serve Prometheus metrics (per partition counters, offsets and lag; latency histograms; Kafka client, Redis pool, Go and process metrics) at http://ADDR/metrics, the probes /healthz and /readyz, and the status page /status, e.g. :9464 (empty: off)"},
		&cli.StringFlag{Name: fLogFormat, Value: "text", Sources: fromEnv(fLogFormat),
			Usage: "log format on stderr: text or json"},
		&cli.StringFlag{Name: fLogLevel, Value: "info", Sources: fromEnv(fLogLevel),
			Usage: "log level: debug, info, warn or error"},
	)
}

// ledgerFlags are the flags that say where the ledger is and what its effect
// does; run and replay share them.
func ledgerFlags() []cli.Flag {
	fs := []cli.Flag{
		&cli.StringFlag{Name: fRedis, Value: "127.0.0.1:6379", Sources: fromEnv(fRedis),
			Usage: "Redis for the ledger: host:port, a redis:// or rediss:// URL, or a comma-separated list of Redis Cluster nodes"},
		&cli.BoolFlag{Name: fRedisCluster, Sources: fromEnv(fRedisCluster),
			Usage: "treat a single --redis address or URL as a Redis Cluster seed"},
	}
	return append(fs,
		&cli.StringFlag{Name: fLedgerPrefix, Value: "shardpipe:ledger:", Sources: fromEnv(fLedgerPrefix),
			Usage: "prefix of every ledger key (prefix + business key); on Redis Cluster with --effect totals it needs a {hash tag}"},
		&cli.DurationFlag{Name: fTTL, Value: 7 * 24 * time.Hour, Sources: fromEnv(fTTL),
			Usage: "how long a ledger entry lives after the last record that met its key; a record read again after that (a replay, a reset) applies again"},
		&cli.StringFlag{Name: fKeyFrom, Value: "key", Sources: fromEnv(fKeyFrom),
			Usage: "where the business key comes from: key (the record key), header:NAME or json:FIELD"},
		keySpaceFlag(),
		&cli.StringFlag{Name: fEffect, Value: "none", Sources: fromEnv(fEffect),
			Usage: "effect per business key: none or totals (HINCRBY a hash per group field), which land atomically with the ledger entry; or http (run only: POST to --http-url in guard mode: claim, call, mark done)"},
		&cli.StringFlag{Name: fTotalsHash, Value: "shardpipe:totals", Sources: fromEnv(fTotalsHash),
			Usage: "totals: the Redis hash that holds the sums"},
		&cli.StringFlag{Name: fTotalsGroup, Value: "customer", Sources: fromEnv(fTotalsGroup),
			Usage: "totals: the JSON field whose value names the hash field"},
		&cli.StringFlag{Name: fTotalsAmount, Value: "amount_cents", Sources: fromEnv(fTotalsAmount),
			Usage: "totals: the JSON integer field added to the sum"},
	)
}

// commitFlags are the commit policy and batch size flags; run and replay
// share them.
func commitFlags() []cli.Flag {
	return []cli.Flag{
		&cli.IntFlag{Name: fCommitEvery, Value: 100, Sources: fromEnv(fCommitEvery),
			Usage: "commit a partition's offset after this many landed records (0: off)"},
		&cli.DurationFlag{Name: fCommitInterval, Value: 5 * time.Second, Sources: fromEnv(fCommitInterval),
			Usage: "commit landed records at most this long after the first of them landed (0: off)"},
		&cli.IntFlag{Name: fMaxUncommitted, Value: 0, Sources: fromEnv(fMaxUncommitted),
			Usage: "most records of a partition landed past its last commit: reaching it commits at once, and while commits fail the partition stops fetching; a crash re-reads at most this many (0: 10 x the larger of --commit-every and --max-batch)"},
		&cli.IntFlag{Name: fMaxBatch, Value: 500, Sources: fromEnv(fMaxBatch),
			Usage: "most records in one Redis round trip"},
	}
}

func brokersFlag() cli.Flag {
	return &cli.StringSliceFlag{Name: fBrokers, Value: []string{"127.0.0.1:9092"}, Sources: fromEnv(fBrokers),
		Usage: "Kafka seed brokers, host:port; repeat the flag or separate with commas"}
}

func groupFlag() cli.Flag {
	return &cli.StringFlag{Name: fGroup, Value: "shardpipe", Sources: fromEnv(fGroup),
		Usage: "consumer group"}
}

func connectTimeoutFlag() cli.Flag {
	return &cli.DurationFlag{Name: fConnectTimeout, Value: 10 * time.Second, Sources: fromEnv(fConnectTimeout),
		Usage: "how long to wait for the brokers and Redis to answer at start"}
}
