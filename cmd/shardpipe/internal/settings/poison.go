package settings

import (
	"slices"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/urfave/cli/v3"

	"github.com/shardpipe/shardpipe/cmd/shardpipe/internal/cliflags"
	"github.com/shardpipe/shardpipe/cmd/shardpipe/internal/flagcheck"
	"github.com/shardpipe/shardpipe/pipeline"
)

// Flag names of poison records that other messages name (a poison storm's,
// a missing dead-letter topic's).
// DefaultOwnPrefix is --dlq-prefix's default: the prefix of shardpipe's own
// Redis keys (dead-letter markers, fence, probe, commit marks, ledger
// manifests). Commands without the flag (reset-offsets) look there.
const DefaultOwnPrefix = "shardpipe:"

// FlagDLQPrefix is the flag of the prefix of shardpipe's own keys.
const FlagDLQPrefix = "dlq-prefix"

const (
	FlagOnPoison    = "on-poison"
	FlagDLQMaxRun   = "dlq-max-run" // the poison storm bounds (pipeline.DeadLetterMaxRun, DeadLetterMaxShare)
	FlagDLQMaxShare = "dlq-max-share"
)

const (
	fDLQTopic       = "dlq-topic"
	fPoisonAttempts = "poison-attempts"
	fDLQPrefix      = FlagDLQPrefix
	fDLQWindow      = "dlq-window"
)

// Poison says what run and replay do with a poison record (no usable key,
// a value the effect cannot read) once its attempts are spent.
type Poison struct {
	// DeadLetter is --on-poison dlq: write the record to the dead-letter
	// topic, once, then commit past it; false: stop.
	DeadLetter bool
	// Topic is the dead-letter topic of every consumed topic; "": <topic>.dlq.
	Topic string
	// Prefix is the prefix of shardpipe's own Redis keys besides the
	// ledger: the dead-letter markers, the durability fence (FenceKey) and
	// the readiness probe's key (opshttp.HealthKey).
	Prefix string
	// Attempts is how many attempts in all a poison record gets, 1 to 100.
	Attempts int
	// CreateDLQ creates missing dead-letter topics (run's
	// --create-dlq-topic; set by the caller, not by PoisonGroup).
	CreateDLQ bool
	// MaxRun stops at more than this many poison records in a row on a
	// partition (0: no bound).
	MaxRun int
	// MaxShare stops at more than this share (0 to 1) of a partition's last
	// Window records poison (0: no bound).
	MaxShare float64
	// Window is how many of a partition's last records MaxShare looks at,
	// at least 1.
	Window int
}

// FenceKey is the key the durability barrier writes before each wait:
// under the poison prefix, which KeysGroup keeps apart from the ledger's.
func FenceKey(prefix string) string { return prefix + "fence" }

// PoisonGroup is the poison-record flags run and replay share, loaded into
// p; topics are the consumed topics (loaded by an earlier group), which the
// dead-letter topic must not be. The keys under --dlq-prefix (Keys,
// ProbeKey) are kept apart from the others by KeysGroup.
func PoisonGroup(p *Poison, topics func() []string) cliflags.Group {
	return cliflags.NewGroup(func(c *cli.Command, bad *cliflags.Problems) { p.load(c, bad, topics()) },
		&cli.StringFlag{Name: FlagOnPoison, Value: "dlq",
			Usage: "a poison record (no usable key, a value the effect cannot read), once its attempts are spent: dlq (write it to the dead-letter topic, once, then commit past it) or stop (exit 1, offset stays before it)"},
		&cli.StringFlag{Name: fDLQTopic,
			Usage: "dead-letter topic for every consumed topic (empty: <topic>.dlq for each); it must exist (run: unless --create-dlq-topic creates it)"},
		&cli.IntFlag{Name: fPoisonAttempts, Value: 3,
			Usage: "attempts in all for a poison record, with backoff from 100ms to 2s between them, before --on-poison applies"},
		&cli.StringFlag{Name: fDLQPrefix, Value: DefaultOwnPrefix,
			Usage: "prefix of shardpipe's own Redis keys besides the ledger: the markers that keep each dead letter written once (prefix + dlq:topic:partition:offset), the key written before each durability wait (prefix + fence) and the one each readiness probe writes (prefix + health); checked at start to stay apart from every other key shardpipe writes (--ledger-prefix's, --totals-hash), so no business key can name one"},
		&cli.IntFlag{Name: FlagDLQMaxRun, Value: pipeline.DefaultDeadLetterMaxRun,
			Usage: "--on-poison dlq: stop (exit 1) at the record failed for good that makes more than this many with no later success of their partitions, over all partitions; a failure is held, not dead-lettered, until a later record of its partition succeeds: so many say the configuration (--key-from, --effect fields, --http-url) is wrong, not the data, and nothing of them is dead-lettered (0: no bound, no holding)"},
		&cli.FloatFlag{Name: FlagDLQMaxShare, Value: pipeline.DefaultDeadLetterMaxShare,
			Usage: "--on-poison dlq: stop (exit 1) at the poison record that makes more than this share of a partition's last --dlq-window records poison (0: no bound)"},
		&cli.IntFlag{Name: fDLQWindow, Value: pipeline.DefaultDeadLetterWindow,
			Usage: "--on-poison dlq: how many of a partition's last records --dlq-max-share looks at"})
}

func (p *Poison) load(c *cli.Command, bad *cliflags.Problems, topics []string) {
	if p.Prefix = c.String(fDLQPrefix); p.Prefix == "" {
		bad.Addf("%s: empty; dead-letter markers need a prefix of their own", ref(fDLQPrefix))
	}
	switch s := c.String(FlagOnPoison); s {
	case "dlq":
		p.DeadLetter = true
	case "stop":
	default:
		bad.Addf("%s %q: want dlq or stop", ref(FlagOnPoison), s)
	}
	if p.Topic = strings.TrimSpace(c.String(fDLQTopic)); p.Topic != "" {
		if msg := flagcheck.Topic(p.Topic); msg != "" {
			bad.Addf("%s %q: %s", ref(fDLQTopic), p.Topic, msg)
		}
		if slices.Contains(topics, p.Topic) {
			bad.Addf("%s %q: also consumed (%s); dead letters would be read back as input", ref(fDLQTopic), p.Topic, ref("topic"))
		}
	}
	p.MaxRun = IntIn(c, bad, FlagDLQMaxRun, flagcheck.In(0, 1_000_000, "0: no bound"))
	p.MaxShare = FloatIn(c, bad, FlagDLQMaxShare, flagcheck.In(0.0, 1, "0: no bound"))
	p.Window = IntIn(c, bad, fDLQWindow, flagcheck.In(1, 100_000, "records"))
	p.Attempts = IntIn(c, bad, fPoisonAttempts, flagcheck.In(1, 100, ""))
}

// Options returns the pipeline options of p; the dead-letter markers live
// in the ledger's Redis rdb, for the ledger's ttl.
func (p Poison) Options(rdb redis.UniversalClient, ttl time.Duration) []pipeline.Opt {
	opts := []pipeline.Opt{pipeline.PoisonAttempts(p.Attempts)}
	if p.DeadLetter {
		opts = append(opts, pipeline.DeadLetters(rdb, p.Prefix, pipeline.DeadLetterTo(p.Topic),
			pipeline.DeadLetterTTL(ttl), pipeline.DeadLetterMaxRun(p.MaxRun), pipeline.DeadLetterMaxShare(p.MaxShare, p.Window)))
	}
	return opts
}
