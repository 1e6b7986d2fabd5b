package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/shardpipe/shardpipe/cmd/shardpipe/internal/settings"
	"github.com/shardpipe/shardpipe/integration"
	"github.com/shardpipe/shardpipe/internal/harness/itest"
)

// sqlTarget splits POSTGRES_URL (which carries the password) as a user
// of run or bench gives it: the URL without the password, and the
// password in SHARDPIPE_SQL_PASSWORD for this test and its workers.
func sqlTarget(t *testing.T) string {
	t.Helper()
	dbURL, pw := integration.PostgresWithoutPassword(t, integration.Postgres(t))
	t.Setenv(settings.EnvSQLPassword, pw)
	t.Setenv("PGPASSWORD", "")
	return dbURL
}

// TestSQLModes runs the SQL modes (l, m, n, o) through Run, each in a worker
// process of the real binary, on the real Kafka, Redis and PostgreSQL with
// a short prefix of a small topic: every mode inserts every order of the
// prefix (n reads them from a topic of their own), the tables hold as many rows as records applied (the
// inbox too, for m and n), the report carries the modes in the order
// l, m, n with the ratios m/l, n/l and n/m of their medians, printed, and
// no bench table is left. It says nothing about speed.
func TestSQLModes(t *testing.T) {
	brokers, addr, dbURL := integration.Kafka(t), integration.Redis(t), sqlTarget(t)
	pool := integration.NewPostgresPool(t, integration.Postgres(t))
	bin := itest.BuildShardpipe(t)
	topic := integration.Topic(t)
	var stderr bytes.Buffer
	cfg := Config{Brokers: brokers, Redis: addr, Topic: topic, Recreate: true, Records: 1000, Partitions: 4, Rounds: 1,
		NaiveRecords: 1, NaiveBudget: time.Second, SQLURL: dbURL, SQLRecords: 300,
		Exe: bin, Args: []string{"bench-worker", "--spec"}, Stderr: &stderr,
		Log: slog.New(slog.NewTextHandler(&stderr, nil))}
	var err error
	if cfg.Modes, err = ParseModes("sql"); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	t.Cleanup(func() {
		dctx, dcancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer dcancel()
		for _, tp := range []string{topic, cfg.sqlTopic()} {
			_ = DeleteTopic(dctx, []kgo.Opt{kgo.SeedBrokers(brokers...)}, tp)
		}
	})
	r, err := Run(ctx, cfg)
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, stderr.String())
	}
	var letters string
	med := map[Mode]float64{}
	for _, m := range r.Modes {
		letters += m.Letter
		med[m.Mode] = m.RecordsPerSec.Median
		if m.RecordsPerSec.Median <= 0 || m.CPUSecPerM.Median <= 0 || m.MaxRSSMB.Median <= 0 {
			t.Errorf("mode %s: %+v, want records/s, CPU and RSS measured", m.Mode, m)
		}
	}
	if letters != "lmno" {
		t.Fatalf("modes %q, want l, m, n and o in that order", letters)
	}
	for _, m := range sqlModes {
		res := r.Raw[m][0]
		if res.Records != 300 || res.Applied != 300 {
			t.Errorf("%s: %d records, %d applied; want the first 300 orders, all applied", m, res.Records, res.Applied)
		}
		if res.Rows != res.Applied {
			t.Errorf("%s: %d rows in the bench table for %d applied", m, res.Rows, res.Applied)
		}
		if wantInbox := res.Applied; m == PGCeiling && res.InboxRows != 0 || m != PGCeiling && res.InboxRows != wantInbox {
			t.Errorf("%s: %d inbox rows for %d applied (l has no inbox)", m, res.InboxRows, res.Applied)
		}
	}
	for name, pair := range map[string][2]float64{
		"m/l": {r.Ratios.InboxOverCeiling, med[PGInbox] / med[PGCeiling]},
		"n/l": {r.Ratios.SQLOverCeiling, med[SQLEffect] / med[PGCeiling]},
		"n/m": {r.Ratios.SQLOverInbox, med[SQLEffect] / med[PGInbox]},
		"o/n": {r.Ratios.BatchesOverSQL, med[SQLBatches] / med[SQLEffect]},
		"o/m": {r.Ratios.BatchesOverInbox, med[SQLBatches] / med[PGInbox]}} {
		if pair[0] <= 0 || pair[0] != pair[1] {
			t.Errorf("ratio %s = %v, want %v", name, pair[0], pair[1])
		}
	}
	if r.SQLRecords != 300 {
		t.Errorf("report's SQL records %d, want 300", r.SQLRecords)
	}
	var b strings.Builder
	if err := WriteTable(&b, r); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"(l) PostgreSQL ceiling", "(m) PostgreSQL ceiling + inbox", "(n) shardpipe, --effect sql", "(o) shardpipe, --effect sql, --max-in-flight 0", "o / n (batches / in flight)",
		"m / l (inbox / pg ceil.)", "n / l (sql / pg ceiling)", "n / m (sql / pg inbox)", "the first 300 orders of the topic"} {
		if !strings.Contains(b.String(), s) {
			t.Errorf("table lacks %q:\n%s", s, b.String())
		}
	}
	var left []string
	rows, err := pool.Query(ctx, "SELECT tablename FROM pg_tables WHERE tablename LIKE 'shardpipe_bench_%'")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			t.Fatal(err)
		}
		left = append(left, name)
	}
	if rows.Err() != nil || len(left) > 0 {
		t.Errorf("bench tables left after the run: %q (%v)", left, rows.Err())
	}
}

// TestSQLSpecCarriesNoSecret: an SQL mode's spec (the worker's command
// line) holds the URL without a password and no password; the worker
// takes it from the variable it inherits, as run does.
func TestSQLSpecCarriesNoSecret(t *testing.T) {
	const pw = "sql-Secr3t"
	t.Setenv(settings.EnvSQLPassword, pw)
	cfg := Config{SQLURL: "postgres://app@db:5432/shop", SQLRecords: 50, Records: 1000}
	for _, m := range sqlModes {
		spec := cfg.sqlSpec(Spec{Mode: m}, "abc-0")
		js, err := json.Marshal(spec)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(js), pw) {
			t.Fatalf("%s: the spec holds the password: %s", m, js)
		}
		var back Spec
		if err := json.Unmarshal(js, &back); err != nil {
			t.Fatal(err)
		}
		db, err := sqlDB(back.SQLURL, back.SQLPasswordFile)
		if err != nil || db.Config.ConnConfig.Password != pw || db.PasswordFrom != "$"+settings.EnvSQLPassword {
			t.Fatalf("%s: worker's database %+v, %v; want the password from $%s", m, db, err, settings.EnvSQLPassword)
		}
		if back.Records != 50 || back.Table != "shardpipe_bench_abc_0_"+labels[m][0] || (m == PGCeiling) != (back.Inbox == "") {
			t.Errorf("%s: spec %+v, want 50 records into shardpipe_bench_abc_0_%s, an inbox but for l", m, back, labels[m][0])
		}
		if wantIn := map[bool]int{true: settings.DefaultHTTPInFlight}[m == SQLEffect]; back.MaxInFlight != wantIn {
			t.Errorf("%s: max in flight %d, want %d (run's default with --effect sql; none for the ceilings)", m, back.MaxInFlight, wantIn)
		}
	}
	if _, err := sqlDB("postgres://app:"+pw+"@db/shop", ""); err == nil || strings.Contains(err.Error(), pw) {
		t.Errorf("a URL with a password: %v, want it refused without showing the password", err)
	}
}
