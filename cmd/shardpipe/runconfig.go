package main

import (
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v3"

	"github.com/shardpipe/shardpipe/pipeline"
	"github.com/shardpipe/shardpipe/sink"
)

// runConfig is run's validated configuration.
type runConfig struct {
	brokers []string
	topics  []string
	group   string
	ledgerConfig
	http httpConfig // with --effect http
	commitConfig
	protocol    pipeline.Protocol
	startLatest bool
	poisonConfig
	operateConfig
	sessionTimeout  time.Duration
	shutdownTimeout time.Duration
	connectTimeout  time.Duration
	reportInterval  time.Duration
	metricsAddr     string
	logFormat       string
	logLevel        slog.Level
}

// problems collects one line per invalid setting.
type problems []string

func (p *problems) addf(format string, args ...any) { *p = append(*p, fmt.Sprintf(format, args...)) }

// loadRunConfig reads and validates every run setting before anything
// connects. It returns a usage error with one line per problem.
func loadRunConfig(c *cli.Command) (runConfig, error) {
	var (
		rc  runConfig
		bad problems
		err error
	)
	rc.brokers = brokerList(&bad, c.StringSlice(fBrokers))
	rc.topics = splitList(c.StringSlice(fTopic))
	if len(rc.topics) == 0 {
		bad.addf("%s: no topic given; name at least one", flagRef(fTopic))
	}
	for _, t := range rc.topics {
		if msg := topicProblem(t); msg != "" {
			bad.addf("%s %q: %s", flagRef(fTopic), t, msg)
		}
	}
	rc.group = strings.TrimSpace(c.String(fGroup))
	if rc.group == "" {
		bad.addf("%s: empty; name the consumer group", flagRef(fGroup))
	}
	rc.ledgerConfig = loadLedgerConfig(c, &bad)
	if rc.httpEffect {
		rc.http = loadHTTPConfig(c, &bad)
	}
	rc.durability = loadDurabilityConfig(c, &bad, rc.redis.cluster)
	rc.commitConfig = loadCommitConfig(c, &bad)
	if rc.protocol, err = pipeline.ParseProtocol(c.String(fGroupProtocol)); err != nil {
		bad.addf("%s %q: want classic or consumer", flagRef(fGroupProtocol), c.String(fGroupProtocol))
	}
	switch s := c.String(fStart); s {
	case "earliest":
	case "latest":
		rc.startLatest = true
	default:
		bad.addf("%s %q: want earliest or latest", flagRef(fStart), s)
	}
	rc.poisonConfig = loadPoisonConfig(c, &bad, rc.topics, rc.ledgerConfig.prefix)
	rc.operateConfig = loadOperateConfig(c, &bad)
	rc.sessionTimeout = positive(&bad, c, fSessionTimeout)
	rc.shutdownTimeout = positive(&bad, c, fShutdownTimeout)
	rc.connectTimeout = positive(&bad, c, fConnectTimeout)
	rc.reportInterval = c.Duration(fReportInterval)
	if rc.reportInterval < 0 {
		bad.addf("%s %v: must be 0 (off) or more", flagRef(fReportInterval), rc.reportInterval)
	}
	if rc.metricsAddr = c.String(fMetricsAddr); rc.metricsAddr != "" {
		if msg := listenAddrProblem(rc.metricsAddr); msg != "" {
			bad.addf("%s %q: %s", flagRef(fMetricsAddr), rc.metricsAddr, msg)
		}
	}
	rc.logFormat = logFormat(&bad, c.String(fLogFormat))
	rc.logLevel = logLevel(&bad, c.String(fLogLevel))
	if len(bad) > 0 {
		return rc, usageErr(bad...)
	}
	return rc, nil
}

// ledgerConfig says where the ledger is and what its effect does.
type ledgerConfig struct {
	redis      redisTarget
	prefix     string
	ttl        time.Duration
	keys       sink.KeySource
	totals     *sink.Totals     // nil: no effect
	durability durabilityConfig // run and replay only (zero in reset-offsets)
	keySpace   string           // keySpaceShared or keySpacePerTopic
	// httpEffect is --effect http: guard mode around an HTTP call (run only;
	// its settings are runConfig.http).
	httpEffect bool
}

// loadLedgerConfig reads the ledgerFlags, adding one line per problem to bad.
func loadLedgerConfig(c *cli.Command, bad *problems) ledgerConfig {
	var (
		lc  ledgerConfig
		err error
	)
	if lc.redis, err = parseRedis(c.String(fRedis), c.Bool(fRedisCluster)); err != nil {
		bad.addf("%s %q: %v", flagRef(fRedis), redactURL(c.String(fRedis)), err)
	}
	lc.prefix = c.String(fLedgerPrefix)
	if lc.prefix == "" {
		bad.addf("%s: empty; ledger keys need a prefix of their own", flagRef(fLedgerPrefix))
	}
	lc.ttl = c.Duration(fTTL)
	if lc.ttl <= 0 {
		bad.addf("%s %v: must be positive", flagRef(fTTL), lc.ttl)
	} else if lc.ttl < time.Millisecond {
		bad.addf("%s %v: must be at least 1ms", flagRef(fTTL), lc.ttl)
	}
	lc.keySpace = loadKeySpace(c, bad)
	if lc.keys, err = sink.ParseKeySource(c.String(fKeyFrom)); err != nil {
		bad.addf("%s %q: want key, header:NAME or json:FIELD", flagRef(fKeyFrom), c.String(fKeyFrom))
	}
	switch e := c.String(fEffect); e {
	case "none":
	case "totals":
		t := sink.Totals{Hash: c.String(fTotalsHash), GroupField: c.String(fTotalsGroup), AmountField: c.String(fTotalsAmount)}
		for _, f := range []struct{ name, v string }{{fTotalsHash, t.Hash}, {fTotalsGroup, t.GroupField}, {fTotalsAmount, t.AmountField}} {
			if f.v == "" {
				bad.addf("%s: empty; --effect totals needs it", flagRef(f.name))
			}
		}
		if lc.redis.cluster && lc.prefix != "" && t.Hash != "" {
			if tag := hashTag(lc.prefix); tag == "" || tag != hashTag(t.Hash) {
				bad.addf("%s %q and %s %q: on Redis Cluster both need the same {hash tag}, e.g. {orders}:ledger: and {orders}:totals",
					flagRef(fLedgerPrefix), lc.prefix, flagRef(fTotalsHash), t.Hash)
			}
		}
		lc.totals = &t
	case "http":
		lc.httpEffect = true
	default:
		bad.addf("%s %q: want none, totals or http", flagRef(fEffect), e)
	}
	return lc
}

// commitConfig is the commit policy and batch size.
type commitConfig struct {
	commitEvery    int
	commitInterval time.Duration
	maxUncommitted int // 0: the pipeline's default
	maxBatch       int
}

// loadCommitConfig reads the commitFlags, adding one line per problem to bad.
func loadCommitConfig(c *cli.Command, bad *problems) commitConfig {
	var cc commitConfig
	cc.commitEvery = int(c.Int(fCommitEvery))
	if cc.commitEvery < 0 {
		bad.addf("%s %d: must be 0 or more", flagRef(fCommitEvery), cc.commitEvery)
	}
	cc.commitInterval = c.Duration(fCommitInterval)
	if cc.commitInterval < 0 {
		bad.addf("%s %v: must be 0 or more", flagRef(fCommitInterval), cc.commitInterval)
	}
	if cc.commitEvery == 0 && cc.commitInterval == 0 {
		bad.addf("%s and %s are both 0: offsets would be committed only at shutdown; set one",
			flagRef(fCommitEvery), flagRef(fCommitInterval))
	}
	cc.maxBatch = int(c.Int(fMaxBatch))
	if cc.maxBatch < 1 {
		bad.addf("%s %d: must be 1 or more", flagRef(fMaxBatch), cc.maxBatch)
	}
	cc.maxUncommitted = int(c.Int(fMaxUncommitted))
	switch {
	case cc.maxUncommitted < 0:
		bad.addf("%s %d: must be 0 (the default) or more", flagRef(fMaxUncommitted), cc.maxUncommitted)
	case cc.maxUncommitted > 0 && cc.maxUncommitted < cc.commitEvery:
		bad.addf("%s %d is below %s %d: want at least it, or 0 for the default",
			flagRef(fMaxUncommitted), cc.maxUncommitted, flagRef(fCommitEvery), cc.commitEvery)
	}
	return cc
}

func positive(bad *problems, c *cli.Command, name string) time.Duration {
	d := c.Duration(name)
	if d <= 0 {
		bad.addf("%s %v: must be positive", flagRef(name), d)
	}
	return d
}

func logFormat(bad *problems, s string) string {
	if s != "text" && s != "json" {
		bad.addf("%s %q: want text or json", flagRef(fLogFormat), s)
	}
	return s
}

func logLevel(bad *problems, s string) slog.Level {
	var l slog.Level
	if err := l.UnmarshalText([]byte(s)); err != nil || strings.ContainsAny(s, "+-") {
		bad.addf("%s %q: want debug, info, warn or error", flagRef(fLogLevel), s)
	}
	return l
}

// splitList flattens comma-separated values and drops empty ones.
func splitList(vs []string) []string {
	var out []string
	for _, v := range vs {
		for _, s := range strings.Split(v, ",") {
			if s = strings.TrimSpace(s); s != "" {
				out = append(out, s)
			}
		}
	}
	return out
}

// brokerList checks that every broker is host:port.
func brokerList(bad *problems, vs []string) []string {
	out := splitList(vs)
	if len(out) == 0 {
		bad.addf("%s: no broker given", flagRef(fBrokers))
	}
	for _, b := range out {
		if msg := hostPortProblem(b); msg != "" {
			bad.addf("%s %q: %s", flagRef(fBrokers), b, msg)
		}
	}
	return out
}

// hostPortProblem says what is wrong with a host:port address, or "".
func hostPortProblem(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "want host:port"
	}
	if host == "" {
		return "no host; want host:port"
	}
	n, err := strconv.Atoi(port)
	if err != nil || n < 1 || n > 65535 {
		return fmt.Sprintf("port %q is not a number from 1 to 65535", port)
	}
	return ""
}

// listenAddrProblem says what is wrong with an address to listen on, or "":
// host:port or :port, the port a number from 0 (any free port) to 65535.
func listenAddrProblem(addr string) string {
	_, port, err := net.SplitHostPort(addr)
	if err != nil || port == "" {
		return "want host:port or :port"
	}
	n, err := strconv.Atoi(port)
	if err != nil || n < 0 || n > 65535 {
		return fmt.Sprintf("port %q is not a number from 0 to 65535", port)
	}
	return ""
}

// topicProblem says why t is not a legal Kafka topic name, or "".
func topicProblem(t string) string {
	if len(t) > 249 {
		return "longer than 249 characters"
	}
	if t == "." || t == ".." {
		return "not a legal topic name"
	}
	for _, r := range t {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-') {
			return fmt.Sprintf("character %q not allowed; topics use [a-zA-Z0-9._-]", r)
		}
	}
	return ""
}

// hashTag returns the Redis Cluster hash tag of key ("" when none).
func hashTag(key string) string {
	i := strings.IndexByte(key, '{')
	if i < 0 {
		return ""
	}
	j := strings.IndexByte(key[i+1:], '}')
	if j <= 0 {
		return ""
	}
	return key[i+1 : i+1+j]
}
