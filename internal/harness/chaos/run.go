package chaos

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/shardpipe/shardpipe/internal/harness/chaoscheck"
)

// runner is one pass's state.
type runner struct {
	cfg                          Config // the pass's configuration (guardConfig for the guard pass)
	guard                        bool   // `run --effect http` against recv
	sql                          bool   // `run --effect sql` into sqlTable
	sqlURL, sqlPassword          string // the SQL pass's --sql-url (no password) and its password
	start                        time.Time
	topic, group, prefix, totals string
	protocol                     string
	slots                        []*consumer
	instance                     int
	faults                       chaoscheck.Faults
	problems                     []string // what the driver saw go wrong outside the checker's remit
	watcher                      *chaoscheck.Watcher
	adm                          *kadm.Client
	recv                         *receiver           // guard pass
	kills                        []chaoscheck.Kill   // every consumer SIGKILL, for the checker
	stops                        []chaoscheck.Kill   // every zombie SIGSTOP, for the checker
	redisDown                    []chaoscheck.Window // Redis crashes and outages
	moments                      []moment            // where to read the logs if the pass fails

	mu  sync.Mutex
	all []*consumer // every instance ever started
}

// Outcome is a chaos run's verdict: the checker's report of each pass (the
// record-mode pass, then the guard-mode pass), with the driver's own
// problems added as violations.
type Outcome struct {
	Passes []chaoscheck.Report
}

// OK reports whether every pass kept every promise.
func (o Outcome) OK() bool {
	for _, p := range o.Passes {
		if !p.OK() {
			return false
		}
	}
	return len(o.Passes) > 0
}

// String is each pass's report (violations, then its line of figures).
func (o Outcome) String() string {
	parts := make([]string, len(o.Passes))
	for i, p := range o.Passes {
		parts[i] = p.String()
	}
	return strings.Join(parts, "\n")
}

// Run performs one chaos run on cfg.Services, which it starts and, at the
// end, stops: the record-mode pass, then the guard-mode pass. It returns
// the checker's report per pass, with the driver's own problems (a
// consumer that died on its own, a graceful stop that failed, a fault
// without an observable effect) added as violations; the error is for a
// run that could not be carried out.
func Run(ctx context.Context, cfg Config) (Outcome, error) {
	if err := cfg.validate(); err != nil {
		return Outcome{}, err
	}
	start := time.Now()
	logf := func(format string, args ...any) {
		fmt.Fprintf(cfg.Out, "chaos: %6.1fs %s\n", time.Since(start).Seconds(), fmt.Sprintf(format, args...))
	}
	stop, err := cfg.startServers(ctx, logf)
	if err != nil {
		return Outcome{}, err
	}
	defer stop()
	if err := checkRedisNodes(ctx, cfg.redis()); err != nil {
		return Outcome{}, err
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(cfg.brokers()...))
	if err != nil {
		return Outcome{}, err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	var out Outcome
	if cfg.RecordPass {
		rep, err := runPass(ctx, cfg, adm, passRecord, start)
		if err != nil {
			return out, err
		}
		out.Passes = append(out.Passes, rep)
		logf("%s", rep.Line())
	}
	if cfg.Guard.Orders > 0 {
		rep, err := runPass(ctx, cfg.guardConfig(), adm, passGuard, start)
		if err != nil {
			return out, err
		}
		out.Passes = append(out.Passes, rep)
		if cfg.SQL.Orders > 0 {
			logf("%s", rep.Line())
		}
	}
	if cfg.SQL.Orders > 0 {
		logf("starting postgres (fsync on, synchronous_commit on) for the sql pass")
		// Run as root, the server runs as the postgres user, which must
		// reach its directory (the work directory is made 0700).
		for _, d := range []string{cfg.WorkDir, cfg.Services.Dir} {
			if err := os.Chmod(d, 0o711); err != nil {
				return out, err
			}
		}
		if err := cfg.Services.Start(ctx, "postgres"); err != nil {
			return out, err
		}
		defer func() {
			if err := cfg.Services.Stop(context.Background(), "postgres"); err != nil {
				logf("stopping postgres: %v", err)
			}
		}()
		rep, err := runPass(ctx, cfg.sqlConfig(), adm, passSQL, start)
		if err != nil {
			return out, err
		}
		out.Passes = append(out.Passes, rep)
	}
	return out, nil
}

// passKind is which pass runPass runs.
type passKind int

const (
	passRecord passKind = iota // --effect totals
	passGuard                  // --effect http against the receiver
	passSQL                    // --effect sql into a table of PostgreSQL
)

// runPass runs one pass on its own topic and group: production, consumers,
// the fault schedule of each protocol, the drain, the stop, the verdict.
func runPass(ctx context.Context, cfg Config, adm *kadm.Client, kind passKind, start time.Time) (chaoscheck.Report, error) {
	id := fmt.Sprintf("chaos-%d-%d", cfg.Seed, time.Now().Unix())
	what := "record mode, --effect totals"
	switch kind {
	case passGuard:
		id += "-guard"
		what = "guard mode, --effect http"
	case passSQL:
		id += "-sql"
		what = "guard mode, --effect sql into a table without a unique constraint"
	}
	guard := kind == passGuard
	r := &runner{cfg: cfg, guard: guard, sql: kind == passSQL, start: start, topic: id, group: id, prefix: id + ":ledger:", totals: id + ":totals",
		slots: make([]*consumer, cfg.Consumers)}
	if cfg.Cluster != nil && !guard { // the totals hash and the ledger keys in one slot
		r.prefix, r.totals = "{"+id+"}:ledger:", "{"+id+"}:totals"
	}
	r.faults.Cluster = cfg.Cluster != nil
	r.logf("seed %d, %s: topic and group %s, %d orders (+%.0f%% re-sends, %d poison) into %d partitions, protocols %v",
		cfg.Seed, what, id, cfg.Orders, cfg.Duplicates*100, cfg.Poison, cfg.Partitions, cfg.Protocols)
	if err := r.createTopics(ctx, adm); err != nil {
		return chaoscheck.Report{}, err
	}
	vcfg := chaoscheck.Config{Brokers: cfg.brokers(), Redis: cfg.redis(), ReplicatedOffsets: cfg.Cluster != nil,
		Topic: r.topic, DLQTopic: DLQTopic(r.topic), Group: r.group, LedgerPrefix: r.prefix, TotalsHash: r.totals}
	if guard {
		var err error
		if r.recv, err = startReceiver(ctx, cfg.ReceiverBin, cfg.WorkDir, id); err != nil {
			return chaoscheck.Report{}, err
		}
		r.logf("receiver listening on %s, recording calls in %s", r.recv.addr, r.recv.calls)
		vcfg.TotalsHash, vcfg.CallLog = "", r.recv.calls
	}
	var pgURL string
	if r.sql {
		var err error
		if pgURL, err = cfg.Services.PostgresURL(ctx); err != nil {
			return chaoscheck.Report{}, err
		}
		if r.sqlURL, r.sqlPassword, err = splitPassword(pgURL); err != nil {
			return chaoscheck.Report{}, err
		}
		if err := r.createSQLTable(ctx, pgURL); err != nil {
			return chaoscheck.Report{}, err
		}
		r.logf("table %s (no unique constraint), inbox %s, on %s", r.sqlTable(), r.sqlInbox(), r.sqlURL)
		vcfg.TotalsHash = ""
	}
	err := r.chaos(ctx, adm)
	r.stopAll()
	if r.recv != nil {
		if rerr := r.recv.stop(); rerr != nil && err == nil {
			err = rerr
		}
	}
	if err != nil {
		return chaoscheck.Report{}, err
	}
	r.logf("verifying")
	vcfg.Kills, vcfg.Stops, vcfg.RedisDown, vcfg.HTTPTimeout = r.kills, r.stops, r.redisDown, httpTimeout
	if r.sql {
		if vcfg.SQLRows, err = r.sqlRows(ctx, pgURL); err != nil {
			return chaoscheck.Report{}, err
		}
	}
	rep, err := chaoscheck.Verify(ctx, vcfg, r.watcher, r.figures())
	if err != nil {
		return chaoscheck.Report{}, err
	}
	if f := rep.Faults; f.Kills > 0 && rep.Replayed() <= 0 {
		r.noEffect("%d kills, yet the consumers suppressed %d records, no more than the topic's %d re-sends: nothing was replayed",
			f.Kills, f.Suppressed, rep.Orders-rep.Unique)
	}
	if rep.Effects != nil && rep.Faults.RedisOutages > 0 && rep.Effects.Stranded == 0 {
		r.noEffect("%d redis outages, yet the receiver answered no call while Redis was down", rep.Faults.RedisOutages)
	}
	for _, p := range r.problems {
		rep.Violations = append(rep.Violations, "driver: "+p)
	}
	if !rep.OK() {
		r.keepEvidence(rep)
	}
	return rep, nil
}

// chaos runs the producer, the consumers and the faults, then drains. The
// watcher of committed offsets runs throughout.
func (r *runner) chaos(ctx context.Context, adm *kadm.Client) error {
	w, err := chaoscheck.NewWatcher(r.cfg.brokers(), r.group, r.topic)
	if err != nil {
		return err
	}
	r.watcher, r.adm = w, adm
	wctx, wstop := context.WithCancel(ctx)
	wdone := make(chan struct{})
	go func() { defer close(wdone); w.Run(wctx, 25*time.Millisecond) }()
	defer func() { wstop(); <-wdone }()
	sctx, sstop := context.WithCancel(ctx)
	defer sstop()
	go r.scrapeLoop(sctx)

	rng := rand.New(rand.NewPCG(r.cfg.Seed, r.cfg.Seed^0xc4a05))
	fixed := recordFaults
	switch {
	case r.guard:
		fixed = guardFaults
	case r.sql:
		fixed = sqlFaults
	}
	schedules := make([][]step, len(r.cfg.Protocols))
	for i := range schedules {
		schedules[i] = phaseSchedule(rng, r.cfg.Consumers, r.cfg.Kills, r.cfg.FaultGap, fixed)
	}
	// Production must outlast the faults: a fault after it hits an idle
	// group and tests nothing (the run would say so and fail).
	if need := r.scheduleTime(schedules); need > r.cfg.Produce {
		r.logf("the fault schedule needs about %v: producing over that instead of %v", need.Round(time.Second), r.cfg.Produce)
		r.cfg.Produce = need
	}
	producer, produced, err := r.startProducer()
	if err != nil {
		return err
	}
	faultsDone := make(chan struct{})
	stage, tailed := r.feedTail(produced, faultsDone)
	finished := false
	defer func() {
		if !finished { // the run failed: do not leave the producers behind
			_ = producer.Process.Kill()
			close(faultsDone)
			<-tailed
		}
	}()
	poisoned := r.injectPoison(ctx, rng)
	for i, proto := range r.cfg.Protocols {
		if err := r.phase(ctx, proto, schedules[i]); err != nil {
			return err
		}
	}
	r.logf("faults done; waiting for the producer")
	close(faultsDone)
	err = errors.Join(<-stage, <-tailed, <-poisoned)
	finished = true
	if err != nil {
		return err
	}
	r.logf("produced; draining")
	if err := r.drain(ctx, adm); err != nil {
		return err
	}
	_, polls := w.Decreases()
	r.logf("drained in %v since start; the watcher polled the committed offsets %d times (%d failed, the broker being down; %d read them); stopping the consumers with SIGTERM",
		time.Since(r.start).Round(time.Second), polls.Made, polls.Failed, polls.Seen)
	return nil
}

// phase switches the consumers to proto (a graceful stop of all, then a
// start of all) and runs one phase's fault schedule.
func (r *runner) phase(ctx context.Context, proto string, steps []step) error {
	if r.protocol != "" {
		r.logf("switching the group from %s to %s: SIGTERM to all, then start all", r.protocol, proto)
		r.stopAll()
	}
	r.protocol = proto
	r.faults.Protocols = append(r.faults.Protocols, proto)
	for i := range r.slots {
		if err := r.startSlot(i); err != nil {
			return err
		}
	}
	r.logf("%s phase schedule: %v", proto, steps)
	for _, s := range steps {
		if err := sleep(ctx, s.Gap); err != nil {
			return err
		}
		if err := r.revive(); err != nil {
			return err
		}
		if err := r.do(ctx, s); err != nil {
			return fmt.Errorf("%s: %w", s, err)
		}
	}
	return nil
}

// runArgs are the flags of the `shardpipe run` in slot: the guard pass
// runs its effects in flight (--max-in-flight guardInFlight); the record
// and SQL passes run the odd slots in flight (recordInFlight,
// guardInFlight) beside the even ones in batches (for SQL: one transaction
// per batch), so both schedules of the partition engine take every fault,
// in one group, and hand partitions to each other.
func (r *runner) runArgs(slot int) []string {
	var effect []string
	switch {
	case r.guard:
		effect = []string{"--effect", "http", "--http-url", r.recv.URL(), "--http-timeout", httpTimeout.String(),
			"--max-in-flight", strconv.Itoa(guardInFlight)}
	case r.sql:
		inFlight := 0
		if slot%2 == 1 {
			inFlight = guardInFlight
		}
		effect = []string{"--effect", "sql", "--sql-url", r.sqlURL, "--sql-inbox-table", r.sqlInbox(),
			"--sql-exec", "INSERT INTO " + r.sqlTable() + " (order_id, customer, amount_cents) VALUES (@order_id, @customer, @amount_cents)",
			"--max-in-flight", strconv.Itoa(inFlight)}
	case slot%2 == 1:
		effect = []string{"--effect", "totals", "--totals-hash", r.totals, "--max-in-flight", strconv.Itoa(recordInFlight)}
	default:
		effect = []string{"--effect", "totals", "--totals-hash", r.totals}
	}
	args := append([]string{"--brokers", strings.Join(r.cfg.brokers(), ","), "--topic", r.topic, "--group", r.group,
		"--redis", r.cfg.redis(), "--ledger-prefix", r.prefix}, effect...)
	if r.cfg.Cluster != nil {
		// Commits wait for a replica of every master: a failover loses
		// nothing (docs/scaling.md).
		args = append(args, "--redis-replicas", "1")
	}
	args = append(args, "--commit-every", "200", "--commit-interval", "1s", "--max-batch", "200",
		"--session-timeout", r.cfg.SessionTimeout.String(), "--shutdown-timeout", "30s", "--connect-timeout", "1m",
		"--report-interval", "0", "--log-format", "json", "--log-level", "debug")
	if r.cfg.Poison > 0 {
		args = append(args, "--on-poison", "dlq", "--dlq-topic", DLQTopic(r.topic))
	}
	return args
}

// The --max-in-flight of the record pass's odd slots, of the guard pass and
// of the SQL pass's odd slots.
const recordInFlight, guardInFlight = 8, 16

// scrapeLoop reads every live consumer's metrics twice a second, so a
// SIGKILLed one leaves figures at most half a second old.
func (r *runner) scrapeLoop(ctx context.Context) {
	hc := &http.Client{Timeout: 300 * time.Millisecond}
	t := time.NewTicker(500 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		r.mu.Lock()
		all := append([]*consumer(nil), r.all...)
		r.mu.Unlock()
		for _, c := range all {
			c.mu.Lock()
			skip := c.paused
			c.mu.Unlock()
			if !skip && !c.exited() {
				c.scrape(ctx, hc)
			}
		}
	}
}

// figures adds the consumers' own counts to the driver's: from each
// process's final summary line, or its last metrics scrape when it was
// killed; rebalances are the distinct assignment epochs in the logs, per
// protocol.
func (r *runner) figures() chaoscheck.Faults {
	f := r.faults
	epochs := map[string]bool{}
	for _, c := range r.all {
		lf, err := readLog(c.logPath)
		if err != nil {
			r.problems = append(r.problems, fmt.Sprintf("read %s: %v", c.logPath, err))
		}
		for _, e := range lf.epochs {
			epochs[c.protocol+"/"+strconv.FormatInt(e, 10)] = true
		}
		c.mu.Lock()
		got := c.scraped
		c.mu.Unlock()
		if lf.summary != nil {
			got = *lf.summary
		}
		f.Suppressed += got.suppressed
		f.FencedCommits += got.fenced
	}
	f.Rebalances = len(epochs)
	return f
}

// checkRedis insists on docs/operating.md's production setting for the ledger.
func checkRedis(ctx context.Context, addr string) error {
	rdb := redis.NewClient(&redis.Options{Addr: addr})
	defer rdb.Close()
	got, err := rdb.ConfigGet(ctx, "append*").Result()
	if err != nil {
		return fmt.Errorf("chaos: redis %s: %w", addr, err)
	}
	if got["appendonly"] != "yes" || got["appendfsync"] != "always" {
		return fmt.Errorf("chaos: redis %s has appendonly %q, appendfsync %q; the run needs yes and always", addr,
			got["appendonly"], got["appendfsync"])
	}
	return nil
}

func (r *runner) logf(format string, args ...any) {
	fmt.Fprintf(r.cfg.Out, "chaos: %6.1fs %s\n", time.Since(r.start).Seconds(), fmt.Sprintf(format, args...))
}

// httpTimeout is the guard pass's --http-timeout. The receiver may hold a
// call longer during a Redis outage; the caller then gives up, its
// outcome unknown, and calls again, which the checker excuses.
const httpTimeout = 5 * time.Second

// splitPassword is raw, a postgres:// URL, without its password, and the
// password (for SHARDPIPE_SQL_PASSWORD: run refuses a --sql-url holding one).
func splitPassword(raw string) (string, string, error) {
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		return "", "", fmt.Errorf("chaos: postgres URL: want postgres://user:password@host:port/db")
	}
	pw, _ := u.User.Password()
	u.User = url.User(u.User.Username())
	return u.String(), pw, nil
}
