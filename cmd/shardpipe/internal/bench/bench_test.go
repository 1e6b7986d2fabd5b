package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"

	"github.com/shardpipe/shardpipe/internal/orders"
	"github.com/shardpipe/shardpipe/secure"
)

func TestStatOf(t *testing.T) {
	tests := []struct {
		in   []float64
		want Stat
	}{
		{nil, Stat{}},
		{[]float64{5}, Stat{5, 5, 5}},
		{[]float64{3, 1, 2}, Stat{2, 1, 3}},
		{[]float64{4, 1, 3, 2}, Stat{2.5, 1, 4}},
	}
	for _, tt := range tests {
		if got := statOf(tt.in); got != tt.want {
			t.Errorf("statOf(%v) = %+v, want %+v", tt.in, got, tt.want)
		}
	}
}

// The pre-filled orders are valid JSON of exactly valueSize bytes, keyed by
// Key(i), with the fields the totals effect reads.
func TestValue(t *testing.T) {
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, i := range []int{0, 7, 999_999, 3_999_999} {
		v := value(i, at)
		if len(v) != valueSize {
			t.Errorf("value(%d) is %d bytes, want %d", i, len(v), valueSize)
		}
		var o struct {
			OrderID     string `json:"order_id"`
			Customer    string `json:"customer"`
			AmountCents int64  `json:"amount_cents"`
		}
		if err := json.Unmarshal(v, &o); err != nil {
			t.Fatalf("value(%d) = %s: %v", i, v, err)
		}
		if o.OrderID != Key(i) || o.Customer == "" || o.AmountCents < 100 {
			t.Errorf("value(%d) = %+v, want order_id %s, a customer and an amount", i, o, Key(i))
		}
		var full orders.Order // and it is what encoding/json writes for that order
		if err := json.Unmarshal(v, &full); err != nil {
			t.Fatal(err)
		}
		if want, err := json.Marshal(full); err != nil || !bytes.Equal(v, want) {
			t.Errorf("value(%d) = %s\nencoding/json gives %s (%v)", i, v, want, err)
		}
	}
}

func TestReportRatios(t *testing.T) {
	res := func(records int64, secs ...float64) []Result {
		var out []Result
		for _, s := range secs {
			out = append(out, Result{Records: records, Seconds: s, CPUSeconds: s / 2, Allocs: uint64(records) * 3})
		}
		return out
	}
	results := map[Mode][]Result{
		Consume:       res(1000, 0.001, 0.002, 0.004), // median 500k/s
		Sink:          res(1000, 0.005, 0.01, 0.02),   // median 100k/s: the ceiling
		Scripted:      res(1000, 0.02),                // 50k/s
		Ledger:        res(1000, 0.00625),             // 160k/s
		Naive:         res(100, 0.1, 0.1, 0.1),        // 1k/s
		Shardpipe:     res(1000, 0.0125),              // 80k/s
		Totals:        res(1000, 0.025),               // 40k/s
		Replay:        res(1000, 0.01),                // 100k/s
		GuardSeq:      res(100, 0.2),                  // 500/s
		GuardInFlight: res(1000, 0.1),                 // 10k/s
		GuardFast:     res(1000, 0.025),               // 40k/s
		PGCeiling:     res(100, 0.002),                // 50k/s
		PGInbox:       res(100, 0.004),                // 25k/s
		SQLEffect:     res(100, 0.05),                 // 2k/s
	}
	// Redis's time: (k) 4 s per 1M busy all through its window, (d) 5 s
	// per 1M; the replay has it in one round of two, so it shows none.
	results[Ledger][0].RedisCPUSeconds = 0.004
	results[Shardpipe][0].RedisCPUSeconds = 0.005
	results[Replay] = append(results[Replay], Result{Records: 1000, Seconds: 0.01, RedisCPUSeconds: 0.002})
	lat := []Result{{P50ms: 5, P99ms: 30, MaxMs: 60}}
	r := newReport(Config{GuardDelay: 20 * time.Millisecond, GuardInFlight: 64, GuardPartitions: 1, Records: 1000, SQLRecords: 100}, results, lat)
	want := Ratios{DOverCeiling: 0.8, DOverLedger: 0.5, LedgerOverSink: 1.6, DOverNaive: 80, EOverD: 0.5, EOverScripted: 0.8,
		FOverCeiling: 1, HOverG: 20, HOverI: 0.25, InboxOverCeiling: 0.5, SQLOverCeiling: 0.04, SQLOverInbox: 0.08}
	got := r.Ratios
	for name, pair := range map[string][2]float64{"d/ceiling": {got.DOverCeiling, want.DOverCeiling},
		"d/k": {got.DOverLedger, want.DOverLedger}, "k/b": {got.LedgerOverSink, want.LedgerOverSink},
		"d/naive": {got.DOverNaive, want.DOverNaive}, "e/d": {got.EOverD, want.EOverD}, "e/j": {got.EOverScripted, want.EOverScripted},
		"f/ceiling": {got.FOverCeiling, want.FOverCeiling}, "h/g": {got.HOverG, want.HOverG}, "h/i": {got.HOverI, want.HOverI},
		"m/l": {got.InboxOverCeiling, want.InboxOverCeiling}, "n/l": {got.SQLOverCeiling, want.SQLOverCeiling},
		"n/m": {got.SQLOverInbox, want.SQLOverInbox}} {
		if d := pair[0] - pair[1]; d > 1e-9 || d < -1e-9 {
			t.Errorf("%s = %v, want %v", name, pair[0], pair[1])
		}
	}
	if m := r.Modes[0]; m.Letter != "a" || m.RecordsPerSec != (Stat{500_000, 250_000, 1_000_000}) ||
		m.AllocsPerRecord.Median != 3 || m.CPUSecPerM.Median != 1 {
		t.Errorf("mode a = %+v", m)
	}
	var letters string
	for _, m := range r.Modes {
		letters += m.Letter
	}
	if letters != "abkjcdefghilmn" {
		t.Errorf("modes in the order %s, want the ledger (k) and scripted (j) ceilings right after (b), the SQL modes last: abkjcdefghilmn", letters)
	}
	if r.SQLRecords != 100 {
		t.Errorf("SQL records %d, want 100", r.SQLRecords)
	}
	js, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{`"d_over_ceiling":0.8`, `"d_over_ledger":0.5`, `"ledger_over_sink":1.6`, `"d_over_naive":80`, `"e_over_d":0.5`, `"e_over_scripted":0.8`, `"f_over_ceiling":1`,
		`"h_over_g":20`, `"h_over_i":0.25`, `"m_over_pg_ceiling":0.5`, `"n_over_pg_ceiling":0.04`, `"n_over_pg_inbox":0.08`, `"sql_records":100`,
		`{"name":"d / min(a, b)","value":0.8,"bound":0.85,"at_most":false,"met":false}`,
		`{"name":"e / j (scripted ceiling)","value":0.8,"bound":0.8,"at_most":false,"met":true}`,
		`{"name":"(d) CPU s per 1M","value":6.25,"bound":2,"at_most":true,"met":false}`,
		`{"name":"(d) allocs/record","value":3,"bound":4,"at_most":true,"met":true}`,
		`{"name":"(e) CPU s per 1M","value":12.5,"bound":4,"at_most":true,"met":false}`,
		`{"name":"latency p99 ms","value":30,"bound":50,"at_most":true,"met":true}`} {
		if !strings.Contains(string(js), k) {
			t.Errorf("JSON lacks %s: %s", k, js)
		}
	}
	if got.RedisDOverLedger < 1.25-1e-9 || got.RedisDOverLedger > 1.25+1e-9 {
		t.Errorf("Redis CPU per record d / k = %v, want 1.25", got.RedisDOverLedger)
	}
	redis := map[string][2]Stat{}
	for _, m := range r.Modes {
		redis[m.Letter] = [2]Stat{m.RedisCPUSecPerM, m.RedisBusy}
	}
	if k := redis["k"]; k[0].Median < 4-1e-9 || k[0].Median > 4+1e-9 || k[1].Median < 0.64-1e-9 || k[1].Median > 0.64+1e-9 {
		t.Errorf("(k) Redis CPU s per 1M and busy %+v, want 4 and 0.64 (0.004 s over 0.00625 s)", k)
	}
	if f := redis["f"]; f != [2]Stat{} {
		t.Errorf("(f) Redis figures %+v from one round of two, want none", f)
	}
	var b strings.Builder
	if err := WriteTable(&b, r); err != nil {
		t.Fatal(err)
	}
	table := b.String()
	if i := strings.Index(table, "Redis's main thread"); i < 0 || strings.Contains(table[i:], "(f) ") || strings.Contains(table[i:], "(a) ") {
		t.Errorf("table's Redis section missing, or listing a mode without Redis figures:\n%s", table)
	}
	for _, s := range []string{"Redis CPU/rec, d / k        1.25", "(k) ledger ceiling (record-mode batch script, no Kafka)  4.00 [4.00-4.00]  0.64 [0.64-0.64]",
		"(d) shardpipe, record mode, defaults", "(j) scripted sink ceiling (ledger + totals, no Kafka)",
		"d / min(a, b)               0.80   >= 0.85 NOT met", "e / j (scripted ceiling)    0.80   >= 0.8  met",
		"(k) ledger ceiling (record-mode batch script, no Kafka)", "d / k (ledger ceiling)      0.50   >= 0.9  NOT met",
		"k / b (script / SET NX)     1.60",
		"f / min(a, b)               1.00   >= 0.8  met", "(d) CPU s per 1M            6.25   <= 2    NOT met",
		"(d) allocs/record           3.00   <= 4    met", "(e) CPU s per 1M           12.50   <= 4    NOT met",
		"latency p99 ms             30.00   <= 50   met",
		"d / c                      80.00   >= 10   met", "(h) guard, HTTP 20ms, max in flight 64, 1p",
		"h / g (in flight / seq)    20.00   >= 20   met", "h / i (delay / 0ms)         0.25   >= 0.5  NOT met",
		"(l) PostgreSQL ceiling (INSERTs batched, no Kafka)", "(n) shardpipe, --effect sql, run's defaults",
		"m / l (inbox / pg ceil.)    0.50", "n / l (sql / pg ceiling)    0.04", "n / m (sql / pg inbox)      0.08",
		"l to o: the first 100 orders of the topic per round"} {
		if !strings.Contains(b.String(), s) {
			t.Errorf("table lacks %q:\n%s", s, b.String())
		}
	}
}

// check refuses rounds that did not measure what they claim.
func TestCheck(t *testing.T) {
	tests := []struct {
		name string
		spec Spec
		res  Result
		ok   bool
	}{
		{"shardpipe all applied", Spec{Mode: Shardpipe, Records: 10}, Result{Records: 10, Applied: 10, Seconds: 1}, true},
		{"shardpipe short", Spec{Mode: Shardpipe, Records: 10}, Result{Records: 9, Applied: 9, Seconds: 1}, false},
		{"shardpipe on a used ledger", Spec{Mode: Shardpipe, Records: 10}, Result{Records: 10, Applied: 8, Suppressed: 2, Seconds: 1}, false},
		{"replay all suppressed", Spec{Mode: Replay, Records: 10}, Result{Records: 10, Suppressed: 10, Seconds: 1}, true},
		{"replay applied some", Spec{Mode: Replay, Records: 10}, Result{Records: 10, Applied: 1, Suppressed: 9, Seconds: 1}, false},
		{"naive prefix", Spec{Mode: Naive, Records: 10}, Result{Records: 4, Seconds: 1}, true},
		{"scripted all claimed", Spec{Mode: Scripted, Records: 10}, Result{Records: 10, Applied: 10, Seconds: 1}, true},
		{"scripted on used keys", Spec{Mode: Scripted, Records: 10}, Result{Records: 10, Applied: 9, Seconds: 1}, false},
		{"ledger all claimed", Spec{Mode: Ledger, Records: 10}, Result{Records: 10, Applied: 10, Seconds: 1}, true},
		{"ledger on used keys", Spec{Mode: Ledger, Records: 10}, Result{Records: 10, Applied: 9, Seconds: 1}, false},
		{"no time", Spec{Mode: Consume, Records: 10}, Result{Records: 10}, false},
		{"guard landed past the target", Spec{Mode: GuardInFlight, Records: 10}, Result{Records: 12, Applied: 12, Seconds: 1}, true},
		{"guard on a used ledger", Spec{Mode: GuardSeq, Records: 10}, Result{Records: 10, Applied: 9, Suppressed: 1, Seconds: 1}, false},
		{"pg ceiling all inserted", Spec{Mode: PGCeiling, Records: 10}, Result{Records: 10, Applied: 10, Rows: 10, Seconds: 1}, true},
		{"pg ceiling short", Spec{Mode: PGCeiling, Records: 10}, Result{Records: 10, Applied: 9, Rows: 9, Seconds: 1}, false},
		{"pg ceiling rows off", Spec{Mode: PGCeiling, Records: 10}, Result{Records: 10, Applied: 10, Rows: 9, Seconds: 1}, false},
		{"pg inbox all inserted", Spec{Mode: PGInbox, Records: 10}, Result{Records: 10, Applied: 10, Rows: 10, InboxRows: 10, Seconds: 1}, true},
		{"pg inbox without inbox rows", Spec{Mode: PGInbox, Records: 10}, Result{Records: 10, Applied: 10, Rows: 10, Seconds: 1}, false},
		{"sql all applied", Spec{Mode: SQLEffect, Records: 10}, Result{Records: 10, Applied: 10, Rows: 10, InboxRows: 10, Seconds: 1}, true},
		{"sql applied more than its topic", Spec{Mode: SQLEffect, Records: 10}, Result{Records: 12, Applied: 12, Rows: 12, InboxRows: 12, Seconds: 1}, false},
		{"sql short", Spec{Mode: SQLEffect, Records: 10}, Result{Records: 10, Applied: 9, Suppressed: 1, Rows: 9, InboxRows: 9, Seconds: 1}, false},
		{"sql rows off", Spec{Mode: SQLEffect, Records: 10}, Result{Records: 10, Applied: 10, Rows: 11, InboxRows: 10, Seconds: 1}, false},
		{"sql inbox off", Spec{Mode: SQLEffect, Records: 10}, Result{Records: 10, Applied: 10, Rows: 10, InboxRows: 9, Seconds: 1}, false},
	}
	for _, tt := range tests {
		if err := check(tt.spec, tt.res); (err == nil) != tt.ok {
			t.Errorf("%s: check = %v, want ok %v", tt.name, err, tt.ok)
		}
	}
}

func TestConfigValidate(t *testing.T) {
	good := Config{Brokers: []string{"k:9092"}, Redis: "r:6379", Topic: "t", Records: 1000, Partitions: 12, Rounds: 1,
		NaiveRecords: 10, NaiveBudget: time.Second, LatencyRate: 100, LatencyDuration: time.Second, LatencyCommit: time.Millisecond}
	if err := good.Validate(); err != nil {
		t.Fatalf("good config: %v", err)
	}
	bad := good
	bad.Records, bad.Rounds, bad.LatencyCommit, bad.GuardRecords, bad.GuardDelay = 10, 0, 0, -20, -time.Second
	err := bad.Validate()
	for _, want := range []string{"records 10", "rounds 0", "latency commit interval", "guard records -20", "guard delay -1s"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate() = %v, want it to name %q", err, want)
		}
	}
}

// TestConfigValidateGuard: the guard modes need a MaxInFlight only when
// they run.
func TestConfigValidateGuard(t *testing.T) {
	c := Config{Brokers: []string{"k:9092"}, Redis: "r:6379", Topic: "t", Records: 1000, Partitions: 12, Rounds: 1,
		NaiveRecords: 10, NaiveBudget: time.Second, GuardRecords: 100}
	err := c.Validate()
	for _, want := range []string{"guard in flight 0: want 1 to 4096", "guard partitions 0: want at least 1"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate() = %v, want it to name %q", err, want)
		}
	}
	c.GuardRecords = 0
	if err := c.Validate(); err != nil {
		t.Errorf("guard modes skipped: Validate() = %v", err)
	}
	c.Modes = []Mode{Shardpipe, SQLEffect}
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "modes l to o need a PostgreSQL URL") {
		t.Errorf("SQL mode without a database: Validate() = %v", err)
	}
	c.SQLURL = "postgres://u@db/x"
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "sql records 0") {
		t.Errorf("SQL mode without records: Validate() = %v", err)
	}
}

func TestParseModes(t *testing.T) {
	got, err := ParseModes("a, d,totals,latency,j,scripted,k,ledger")
	if err != nil {
		t.Fatal(err)
	}
	want := []Mode{Consume, Shardpipe, Totals, Latency, Scripted, Scripted, Ledger, Ledger}
	if strings.Join(modeStrings(got), ",") != strings.Join(modeStrings(want), ",") {
		t.Errorf("ParseModes = %v, want %v", got, want)
	}
	if _, err := ParseModes("d,z"); err == nil || !strings.Contains(err.Error(), `"z"`) {
		t.Errorf("ParseModes(d,z) = %v, want an error naming z", err)
	}
	got, err = ParseModes("guard,h")
	if want := []Mode{GuardSeq, GuardInFlight, GuardFast, GuardInFlight}; err != nil ||
		strings.Join(modeStrings(got), ",") != strings.Join(modeStrings(want), ",") {
		t.Errorf("ParseModes(guard,h) = %v, %v; want %v", got, err, want)
	}
	got, err = ParseModes("sql,n,pg-inbox")
	if want := []Mode{PGCeiling, PGInbox, SQLEffect, SQLBatches, SQLEffect, PGInbox}; err != nil ||
		strings.Join(modeStrings(got), ",") != strings.Join(modeStrings(want), ",") {
		t.Errorf("ParseModes(sql,n,pg-inbox) = %v, %v; want %v", got, err, want)
	}
	c := Config{Modes: []Mode{Replay}}
	if !c.wants(Shardpipe) || !c.wants(Replay) || c.wants(Consume) || c.wants(Latency) {
		t.Error("replay alone should bring in shardpipe and nothing else")
	}
}

func modeStrings(ms []Mode) []string {
	var out []string
	for _, m := range ms {
		out = append(out, string(m))
	}
	return out
}

// TestSpecCarriesNoSecret: a worker's spec (its command line) names the
// password's variable or file, never the password, and the worker makes
// the same SASL options from it as decoded.
func TestSpecCarriesNoSecret(t *testing.T) {
	const pw = "bench-Secr3t"
	t.Setenv("SHARDPIPE_TEST_BENCH_PASSWORD", pw)
	file := filepath.Join(t.TempDir(), "pw")
	if err := os.WriteFile(file, []byte(pw+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, kv := range []secure.KafkaValues{
		{SASLMechanism: "SCRAM-SHA-512", SASLUser: "u", PasswordEnv: "SHARDPIPE_TEST_BENCH_PASSWORD"},
		{TLS: true, SASLMechanism: "PLAIN", SASLUser: "u", SASLPasswordFile: file},
	} {
		js, err := json.Marshal(Spec{Mode: Consume, Brokers: []string{"127.0.0.1:9092"}, Kafka: kv})
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(js), pw) {
			t.Fatalf("the spec holds the password: %s", js)
		}
		var back Spec
		if err := json.Unmarshal(js, &back); err != nil {
			t.Fatal(err)
		}
		if opts, err := back.Kafka.Opts(); err != nil || len(opts) == 0 {
			t.Fatalf("decoded spec %s: %d options, %v; want SASL's", js, len(opts), err)
		}
	}
}

// TestScriptedCeiling: the scripted ceiling applies every order of the
// topic through the Ledger with the totals effect: every key claimed, each
// order's amount added to its customer once; a second run over the same
// keys claims and adds nothing.
func TestScriptedCeiling(t *testing.T) {
	m := miniredis.RunT(t)
	spec := Spec{Mode: Scripted, Redis: m.Addr(), Records: 1234, Prefix: "p:", TTL: time.Hour}
	ctx := context.Background()
	res, err := runScripted(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	if res.Records != 1234 || res.Applied != 1234 || res.Seconds <= 0 {
		t.Fatalf("first run: %+v, want 1234 records all applied", res)
	}
	want := map[string]int64{}
	for i := range spec.Records {
		want[customer(i)] += amount(i)
	}
	check := func() {
		t.Helper()
		for c, sum := range want {
			if got := m.HGet("p:totals", c); got != strconv.FormatInt(sum, 10) {
				t.Fatalf("totals %s = %s, want %d", c, got, sum)
			}
		}
		if !m.Exists("p:" + Key(1233)) {
			t.Fatalf("key %s not claimed", Key(1233))
		}
	}
	check()
	if res, err = runScripted(ctx, spec); err != nil || res.Applied != 0 {
		t.Fatalf("second run: %+v, %v; want nothing applied", res, err)
	}
	check()
}

// TestAppendKey: the scripted ceiling's keys and customers are the topic's.
func TestAppendKey(t *testing.T) {
	for _, c := range []struct {
		i             int
		key, customer string
	}{
		{0, "bench-ord-000000000", "cust-000"},
		{7, "bench-ord-000000007", "cust-007"},
		{999, "bench-ord-000000999", "cust-999"},
		{1000, "bench-ord-000001000", "cust-000"},
		{123456789, "bench-ord-123456789", "cust-789"},
		{1234567890, "bench-ord-1234567890", "cust-890"},
	} {
		if got := string(appendKey(nil, c.i)); got != c.key || Key(c.i) != c.key {
			t.Errorf("appendKey(%d) = %q, Key = %q, want %q", c.i, got, Key(c.i), c.key)
		}
		if got := "cust-" + string(appendPadded(nil, c.i%1000, 3)); got != c.customer || customer(c.i) != c.customer {
			t.Errorf("customer of %d = %q (customer: %q), want %q", c.i, got, customer(c.i), c.customer)
		}
	}
}

// TestCPUSeconds reads Redis's main thread's time from INFO cpu, the
// process's where the main thread's is absent (Redis before 6.2), and
// nothing from a reply with neither.
func TestCPUSeconds(t *testing.T) {
	tests := []struct {
		info string
		want float64
		ok   bool
	}{
		{"# CPU\r\nused_cpu_sys:182.5\r\nused_cpu_user:1353.25\r\nused_cpu_sys_main_thread:153.5\r\nused_cpu_user_main_thread:1347.25\r\n", 1500.75, true},
		{"# CPU\r\nused_cpu_sys:2.5\r\nused_cpu_user:10.25\r\nused_cpu_sys_children:1\r\n", 12.75, true},
		{"# CPU\r\n", 0, false},
		{"used_cpu_user_main_thread:x\r\nused_cpu_sys_main_thread:1\r\n", 0, false},
	}
	for _, tt := range tests {
		if got, ok := cpuSeconds(tt.info); ok != tt.ok || got != tt.want {
			t.Errorf("cpuSeconds(%q) = %v, %v; want %v, %v", tt.info, got, ok, tt.want, tt.ok)
		}
	}
}
