package settings

import (
	"net/url"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/shardpipe/shardpipe/cmd/shardpipe/internal/cliflags"
	"github.com/shardpipe/shardpipe/secure"
)

// SQLDB is a PostgreSQL database as --sql-url and its password give it:
// run's --effect sql and bench's SQL modes read it the same way.
type SQLDB struct {
	// Config is the pool's configuration from --sql-url, with the password
	// from --sql-password-file, SHARDPIPE_SQL_PASSWORD or PGPASSWORD.
	Config *pgxpool.Config
	// Desc names the database in messages (the URL, which holds no password).
	Desc string
	// PasswordFrom names where the password came from ("" for none).
	PasswordFrom string
}

// LoadSQLDB reads raw, a postgres:// URL that must not carry a password
// (a URL that does is refused, so that the password stays out of process
// lists and logs), and the password: passwordFile's when it is not "",
// else SHARDPIPE_SQL_PASSWORD's, else PGPASSWORD's. Each problem is one
// line of bad naming --sql-url or --sql-password-file; raw "" is left for
// the caller to refuse or skip (Config stays nil). It does no I/O but
// reading passwordFile.
func LoadSQLDB(raw, passwordFile string, bad *cliflags.Problems) SQLDB {
	var d SQLDB
	if raw != "" {
		u, err := url.Parse(raw)
		switch {
		case err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") || u.Host == "":
			bad.Addf("%s %q: want a postgres:// URL with a host", ref(fSQLURL), secure.RedactURL(raw))
		case hasPassword(u):
			bad.Addf("%s %q: carries a password; give it with %s or %s instead, so that it stays out of process lists and logs",
				ref(fSQLURL), secure.RedactURL(raw), ref(fSQLPasswordFile), EnvSQLPassword)
		default:
			if d.Config, err = pgxpool.ParseConfig(raw); err != nil {
				bad.Addf("%s %q: %v", ref(fSQLURL), raw, err)
			}
			d.Desc = raw
		}
	}
	if pw, err := sqlPassword(passwordFile); err != nil {
		bad.Addf("%s: %v", ref(fSQLPasswordFile), err)
	} else if !pw.IsZero() && d.Config != nil {
		d.Config.ConnConfig.Password, d.PasswordFrom = pw.Value(), pw.Source()
	}
	return d
}

// sqlPassword is the file's, else SHARDPIPE_SQL_PASSWORD's, else PGPASSWORD's.
func sqlPassword(file string) (secure.Secret, error) {
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
