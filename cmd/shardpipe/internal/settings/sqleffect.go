package settings

import (
	"log/slog"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/urfave/cli/v3"

	"github.com/shardpipe/shardpipe/cmd/shardpipe/internal/cliflags"
	"github.com/shardpipe/shardpipe/cmd/shardpipe/internal/flagcheck"
	"github.com/shardpipe/shardpipe/pgeffect"
	"github.com/shardpipe/shardpipe/pipeline"
)

const (
	fSQLURL          = "sql-url"
	fSQLExec         = "sql-exec"
	fSQLInbox        = "sql-inbox-table"
	fSQLPasswordFile = "sql-password-file"
	fSQLKeep         = "sql-inbox-keep"
)

// EnvSQLPassword is the variable --effect sql takes its password from
// when --sql-password-file is not given; PGPASSWORD is read after it.
const EnvSQLPassword = "SHARDPIPE_SQL_PASSWORD"

// SQL is --effect sql's settings.
type SQL struct {
	// SQLDB is the database: --sql-url with its password (LoadSQLDB).
	SQLDB
	// Statement is --sql-exec.
	Statement *pgeffect.Statement
	// Inbox is --sql-inbox-table.
	Inbox string
	// Keep is --sql-inbox-keep: inbox rows older than this are pruned in
	// the background (pgeffect.Pruner); 0 keeps them all.
	Keep time.Duration
}

// SQLGroup is the flags of --effect sql, loaded into s and checked only
// when on is true once they load (the ledger's group sets it).
func SQLGroup(s *SQL, on *bool) cliflags.Group {
	return cliflags.NewGroup(func(c *cli.Command, bad *cliflags.Problems) {
		if *on {
			s.load(c, bad)
		}
	},
		&cli.StringFlag{Name: fSQLURL,
			Usage: "sql: the PostgreSQL database, postgres://USER@HOST:PORT/DB[?sslmode=...], without a password (give it with --sql-password-file, " + EnvSQLPassword + " or PGPASSWORD)"},
		&cli.StringFlag{Name: fSQLExec,
			Usage: "sql: the statement run once per business key, in the transaction that records the key in the inbox; @name takes the record value's top-level JSON field name (a record lacking one is dead-lettered)"},
		&cli.StringFlag{Name: fSQLInbox, Value: pgeffect.DefaultInbox,
			Usage: "sql: the inbox table (table or schema.table) holding each applied business key; created if missing"},
		&cli.StringFlag{Name: fSQLPasswordFile,
			Usage: "sql: a file holding the database user's password; or set " + EnvSQLPassword + " (or PGPASSWORD)"},
		&cli.DurationFlag{Name: fSQLKeep,
			Usage: "sql: prune inbox rows recorded longer ago than this, in the background, at most 1000 a second (0: keep them all); keep at least the topic's retention, or a record read again after its Redis claim is gone applies again"})
}

func (s *SQL) load(c *cli.Command, bad *cliflags.Problems) {
	raw := c.String(fSQLURL)
	if raw == "" {
		bad.Addf("%s: empty; --effect sql needs the database URL", ref(fSQLURL))
	}
	s.SQLDB = LoadSQLDB(raw, c.String(fSQLPasswordFile), bad)
	var err error
	if s.Statement, err = pgeffect.NewStatement(c.String(fSQLExec)); err != nil {
		bad.Addf("%s: %v; --effect sql needs the statement to run per record", ref(fSQLExec), err)
	}
	if s.Inbox = c.String(fSQLInbox); s.Inbox == "" {
		bad.Addf("%s: empty; --effect sql needs the inbox table", ref(fSQLInbox))
	}
	s.Keep = DurationIn(c, bad, fSQLKeep, flagcheck.In(0, 87600*time.Hour, "0: keep them all"))
}

// Guarded is --effect sql: guard mode (a sink.Guard on l's Redis rdb, key
// space, TTL and key source, with GuardLease) around eff, one inbox
// transaction per batch (pipeline.GuardedBatch: per record with
// --max-in-flight, where each record is a batch); in a per-topic key space,
// one Guard per topic.
func (s SQL) Guarded(l Ledger, eff *pgeffect.Effect, rdb redis.UniversalClient, topics []string, log *slog.Logger) (pipeline.Applier, error) {
	return l.PerTopic(topics, log, func(sp Spec, topic string) (pipeline.Applier, error) {
		g, err := sp.Guard(rdb, topic, GuardLease)
		if err != nil {
			return nil, err
		}
		return pipeline.GuardedBatch(g, eff.DoBatch), nil
	})
}
