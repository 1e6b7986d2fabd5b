package main

import (
	"errors"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/urfave/cli/v3"

	"github.com/shardpipe/shardpipe/cmd/shardpipe/internal/cliflags"
	"github.com/shardpipe/shardpipe/cmd/shardpipe/internal/flagcheck"
	"github.com/shardpipe/shardpipe/cmd/shardpipe/internal/settings"
	"github.com/shardpipe/shardpipe/secure"
)

// Flag names shared by several commands. Each is also read from envName(name).
const (
	fBrokers        = "brokers"
	fTopic          = "topic"
	fGroup          = "group"
	fRedis          = "redis"
	fRedisCluster   = "redis-cluster"
	fConnectTimeout = "connect-timeout"
	fReportInterval = "report-interval"
	fLogFormat      = "log-format"
	fLogLevel       = "log-level"
	fJSON           = "json"
)

// kafkaConn is how to reach Kafka: every command that talks to the brokers
// takes kafkaGroup, so a connection setting (TLS, SASL) added here reaches
// all of them.
type kafkaConn struct {
	brokers []string
	sec     secure.KafkaValues
	opts    []kgo.Opt // TLS and SASL: sec's options
}

func kafkaGroup(k *kafkaConn) cliflags.Group {
	return cliflags.NewGroup(func(c *cli.Command, bad *cliflags.Problems) {
		k.brokers = flagcheck.SplitList(c.StringSlice(fBrokers))
		if len(k.brokers) == 0 {
			bad.Addf("%s: no broker given", flagRef(fBrokers))
		}
		for _, b := range k.brokers {
			if msg := flagcheck.HostPort(b); msg != "" {
				bad.Addf("%s %q: %s", flagRef(fBrokers), b, msg)
			}
		}
		var err error
		k.sec = secure.KafkaValuesFrom(c, "kafka-", "SHARDPIPE_KAFKA_SASL_PASSWORD")
		k.opts, err = k.sec.Opts()
		settingProblem(bad, "kafka-", err)
	}, append([]cli.Flag{&cli.StringSliceFlag{Name: fBrokers, Value: []string{"127.0.0.1:9092"},
		Usage: "Kafka seed brokers, host:port; repeat the flag or separate with commas"}},
		settingFlags(secure.KafkaSettings("kafka-", "SHARDPIPE_KAFKA_SASL_PASSWORD"))...)...)
}

// settingProblem adds a line per setting of err (secure.SettingError),
// naming its flag: prefix and the setting's name.
func settingProblem(bad *cliflags.Problems, prefix string, err error) {
	if se := (*secure.SettingError)(nil); errors.As(err, &se) {
		bad.Addf("%s: %v", flagRef(prefix+se.Setting), se)
	} else if err != nil {
		bad.Addf("%s: %v", strings.TrimSuffix(prefix, "-"), err)
	}
}

// redisGroup is the ledger's Redis: --redis and --redis-cluster.
func redisGroup(t *flagcheck.RedisTarget) cliflags.Group {
	return cliflags.NewGroup(func(c *cli.Command, bad *cliflags.Problems) {
		var err error
		if *t, err = flagcheck.ParseRedis(c.String(fRedis), c.Bool(fRedisCluster)); err != nil {
			redisProblems(bad, c.String(fRedis), err)
		}
		r, serr := secure.RedisValuesFrom(c, "redis-", "SHARDPIPE_REDIS_PASSWORD").Redis()
		if settingProblem(bad, "redis-", serr); serr == nil && err == nil {
			settingProblem(bad, "redis-", t.Secure(r))
		}
	}, append([]cli.Flag{&cli.StringFlag{Name: fRedis, Value: "127.0.0.1:6379",
		Usage: "Redis for the ledger: host:port, a redis:// or rediss:// URL (with ?master_name=M: Redis Sentinel, the URL's host and &addr= the sentinels), or a comma-separated list of Redis Cluster nodes"},
		&cli.BoolFlag{Name: fRedisCluster, Usage: "treat a single --redis address or URL as a Redis Cluster seed"}},
		settingFlags(secure.RedisSettings("redis-", "SHARDPIPE_REDIS_PASSWORD"))...)...)
}

// redisProblems adds a line per problem of the --redis value spec (err is
// flagcheck.ParseRedis's), naming the value only as secure.RedactURL prints
// it, and not at all when it does not parse.
func redisProblems(bad *cliflags.Problems, spec string, err error) {
	name := flagRef(fRedis)
	if red := secure.RedactURL(spec); red != secure.Withheld {
		name += " " + strconv.Quote(red)
	}
	errs := []error{err}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	}
	for _, e := range errs {
		bad.Addf("%s: %v", name, e)
	}
}

// settingFlags makes a flag of each setting.
func settingFlags(ss []secure.Setting) (fs []cli.Flag) {
	for _, s := range ss {
		var f cli.Flag = &cli.StringFlag{Name: s.Name, Usage: s.Usage}
		if s.Bool {
			f = &cli.BoolFlag{Name: s.Name, Usage: s.Usage}
		}
		fs = append(fs, f)
	}
	return fs
}

// connectGroup is --connect-timeout; usage names only the servers the
// command waits for.
func connectGroup(d *time.Duration, usage string) cliflags.Group {
	return cliflags.NewGroup(func(c *cli.Command, bad *cliflags.Problems) {
		*d = settings.DurationIn(c, bad, fConnectTimeout, settings.Timeouts())
	},
		&cli.DurationFlag{Name: fConnectTimeout, Value: 10 * time.Second, Usage: usage})
}

// Usages of --connect-timeout.
const (
	waitBrokers      = "how long to wait for the brokers to answer at start"
	waitBrokersRedis = "how long to wait for the brokers and Redis to answer at start"
)

// topicGroup is one required --topic; what says what the command does with it.
func topicGroup(t *string, what string) cliflags.Group {
	return cliflags.NewGroup(func(c *cli.Command, bad *cliflags.Problems) {
		*t = strings.TrimSpace(c.String(fTopic))
		if *t == "" {
			bad.Addf("%s: no topic given", flagRef(fTopic))
		} else if msg := flagcheck.Topic(*t); msg != "" {
			bad.Addf("%s %q: %s", flagRef(fTopic), *t, msg)
		}
	}, &cli.StringFlag{Name: fTopic, Usage: what + " (required)"})
}

// topicsGroup is a repeatable --topic; required says whether one is needed.
func topicsGroup(ts *[]string, usage string, required bool) cliflags.Group {
	return cliflags.NewGroup(func(c *cli.Command, bad *cliflags.Problems) {
		*ts = flagcheck.SplitList(c.StringSlice(fTopic))
		if required && len(*ts) == 0 {
			bad.Addf("%s: no topic given; name at least one", flagRef(fTopic))
		}
		for _, t := range *ts {
			if msg := flagcheck.Topic(t); msg != "" {
				bad.Addf("%s %q: %s", flagRef(fTopic), t, msg)
			}
		}
	}, &cli.StringSliceFlag{Name: fTopic, Usage: usage})
}

// consumerGroup is --group, the consumer group's name.
func consumerGroup(g *string) cliflags.Group {
	return cliflags.NewGroup(func(c *cli.Command, bad *cliflags.Problems) {
		if *g = strings.TrimSpace(c.String(fGroup)); *g == "" {
			bad.Addf("%s: empty; name the consumer group", flagRef(fGroup))
		}
	}, &cli.StringFlag{Name: fGroup, Value: "shardpipe", Usage: "consumer group"})
}

// logConfig is where and how a long-running command logs.
type logConfig struct {
	reportInterval time.Duration
	format         string
	level          slog.Level
}

// logGroup is --report-interval (what it logs: reports), --log-format and
// --log-level.
func logGroup(lc *logConfig, reports string) cliflags.Group {
	return cliflags.NewGroup(func(c *cli.Command, bad *cliflags.Problems) {
		lc.reportInterval = settings.DurationIn(c, bad, fReportInterval, flagcheck.In(0, 24*time.Hour, "0: off"))
		if lc.format = c.String(fLogFormat); lc.format != "text" && lc.format != "json" {
			bad.Addf("%s %q: want text or json", flagRef(fLogFormat), lc.format)
		}
		s := c.String(fLogLevel)
		if err := lc.level.UnmarshalText([]byte(s)); err != nil || strings.ContainsAny(s, "+-") {
			bad.Addf("%s %q: want debug, info, warn or error", flagRef(fLogLevel), s)
		}
	},
		&cli.DurationFlag{Name: fReportInterval, Value: 10 * time.Second, Usage: reports + " (0: never)"},
		&cli.StringFlag{Name: fLogFormat, Value: "text", Usage: "log format on stderr: text or json"},
		&cli.StringFlag{Name: fLogLevel, Value: "info", Usage: "log level: debug, info, warn or error"})
}
