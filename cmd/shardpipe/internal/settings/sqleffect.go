package settings

import (
	"log/slog"
	"net/url"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"
	"github.com/urfave/cli/v3"

	"github.com/shardpipe/shardpipe/cmd/shardpipe/internal/cliflags"
	"github.com/shardpipe/shardpipe/cmd/shardpipe/internal/flagcheck"
	"github.com/shardpipe/shardpipe/pgeffect"
	"github.com/shardpipe/shardpipe/pipeline"
	"github.com/shardpipe/shardpipe/secure"
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
	// Config is the pool's configuration from --sql-url, with the password
	// from --sql-password-file, SHARDPIPE_SQL_PASSWORD or PGPASSWORD.
	Config *pgxpool.Config
	// Desc names the database in messages (the URL, which holds no password).
	Desc string
	// PasswordFrom names where the password came from ("" for none).
	PasswordFrom string
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
	u, err := url.Parse(raw)
	switch {
	case raw == "":
		bad.Addf("%s: empty; --effect sql needs the database URL", ref(fSQLURL))
	case err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") || u.Host == "":
		bad.Addf("%s %q: want a postgres:// URL with a host", ref(fSQLURL), secure.RedactURL(raw))
	case hasPassword(u):
		bad.Addf("%s %q: carries a password; give it with %s or %s instead, so that it stays out of process lists and logs",
			ref(fSQLURL), secure.RedactURL(raw), ref(fSQLPasswordFile), EnvSQLPassword)
	default:
		if s.Config, err = pgxpool.ParseConfig(raw); err != nil {
			bad.Addf("%s %q: %v", ref(fSQLURL), raw, err)
		}
		s.Desc = raw
	}
	if pw, err := s.password(c.String(fSQLPasswordFile)); err != nil {
		bad.Addf("%s: %v", ref(fSQLPasswordFile), err)
	} else if !pw.IsZero() && s.Config != nil {
		s.Config.ConnConfig.Password, s.PasswordFrom = pw.Value(), pw.Source()
	}
	if s.Statement, err = pgeffect.NewStatement(c.String(fSQLExec)); err != nil {
		bad.Addf("%s: %v; --effect sql needs the statement to run per record", ref(fSQLExec), err)
	}
	if s.Inbox = c.String(fSQLInbox); s.Inbox == "" {
		bad.Addf("%s: empty; --effect sql needs the inbox table", ref(fSQLInbox))
	}
	s.Keep = DurationIn(c, bad, fSQLKeep, flagcheck.In(0, 87600*time.Hour, "0: keep them all"))
}

// password is the file's, else SHARDPIPE_SQL_PASSWORD's, else PGPASSWORD's.
func (s *SQL) password(file string) (secure.Secret, error) {
	if file != "" {
		return secure.SecretFromFile("PostgreSQL password file", file)
	}
	if pw := secure.SecretFromEnv(EnvSQLPassword); !pw.IsZero() {
		return pw, nil
	}
	return secure.SecretFromEnv("PGPASSWORD"), nil
}

// hasPassword reports whether u carries a password, in its user info or
// as a password query parameter.
func hasPassword(u *url.URL) bool {
	_, set := u.User.Password()
	return set || u.Query().Has("password")
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
