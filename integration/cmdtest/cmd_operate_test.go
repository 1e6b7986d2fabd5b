package cmdtest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/shardpipe/shardpipe/integration"
	"github.com/shardpipe/shardpipe/internal/harness/itest"
)

// TestCmdProbesAndMetrics runs `shardpipe run --metrics-addr` on real Kafka
// and a private Redis. Once assigned, /readyz and /healthz answer 200 with
// every check named; /metrics passes `promtool check metrics` and carries
// the lag, latency histograms, Kafka client, Redis pool, Go and process
// metrics, with the counters matching what landed. When Redis is killed,
// /readyz answers 503 naming the redis check while /healthz stays 200 (the
// process is alive and retrying, not wedged).
func TestCmdProbesAndMetrics(t *testing.T) {
	const partitions, records = 3, 300
	promtool := promtoolPath(t)
	brokers := integration.Kafka(t)
	rs := itest.StartPrivateRedis(t)
	bin := itest.BuildShardpipe(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	topic := integration.CreateTopic(t, brokers, partitions)
	integration.CreateDeadLetterTopic(t, brokers, topic, partitions)
	prod := integration.NewKafkaClient(t, brokers, kgo.DefaultProduceTopic(topic))
	for i := range records {
		if err := prod.ProduceSync(ctx, &kgo.Record{Key: fmt.Appendf(nil, "o-%d", i), Value: []byte("{}")}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	run := itest.Start(t, "run", bin, "run", "--brokers", strings.Join(brokers, ","), "--topic", topic,
		"--group", integration.Group(t), "--redis", rs.Addr, "--ledger-prefix", "l:", "--commit-every", "50",
		"--commit-interval", "200ms", "--metrics-addr", "127.0.0.1:0", "--log-format", "json")
	line := run.WaitLine(ctx, "serving Prometheus metrics", func(map[string]any) bool { return true })
	base := "http://" + line["addr"].(string)

	ready := awaitProbe(ctx, t, base+"/readyz", http.StatusOK)
	checkNames(t, "readyz", ready, "pipeline", "group", "redis", "commits", "fence")
	live := awaitProbe(ctx, t, base+"/healthz", http.StatusOK)
	checkNames(t, "healthz", live, "pipeline", "workers")

	// Every record landed and committed: applied counts them, lag is 0.
	var body string
	var fams map[string]*dto.MetricFamily
	for {
		body, fams = scrapeMetrics(ctx, t, base)
		if sum(fams, "shardpipe_effects_applied_total") == records && sum(fams, "shardpipe_lag_records") == 0 &&
			len(fams["shardpipe_lag_records"].GetMetric()) == partitions {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("metrics never showed %d applied and no lag:\n%s", records, body)
		}
		time.Sleep(100 * time.Millisecond)
	}
	check := exec.CommandContext(ctx, promtool, "check", "metrics")
	check.Stdin = strings.NewReader(body)
	if out, err := check.CombinedOutput(); err != nil {
		t.Errorf("promtool check metrics: %v\n%s", err, out)
	}
	for _, name := range []string{"shardpipe_record_age_seconds", "shardpipe_ledger_round_trip_seconds",
		"shardpipe_commit_round_trip_seconds"} {
		if n := histCount(fams, name); n == 0 {
			t.Errorf("%s observed nothing", name)
		}
	}
	if n := histCount(fams, "shardpipe_record_age_seconds"); n != records {
		t.Errorf("shardpipe_record_age_seconds observed %d records, want %d (one per applied effect)", n, records)
	}
	for _, name := range []string{"shardpipe_uncommitted_records", "shardpipe_stable_offset", "shardpipe_commit_failures",
		"shardpipe_partition_fenced", "shardpipe_kafka_connects_total", "shardpipe_kafka_fetch_records_total",
		"shardpipe_redis_pool_conns", "shardpipe_redis_pool_hits_total", "go_goroutines", "process_cpu_seconds_total"} {
		if fams[name] == nil {
			t.Errorf("metrics lack %s", name)
		}
	}
	if got := sum(fams, "shardpipe_kafka_fetch_records_total"); got < records {
		t.Errorf("shardpipe_kafka_fetch_records_total = %v, want at least %d", got, records)
	}

	// Redis down: not ready, naming redis, but alive.
	rs.Kill()
	notReady := awaitProbe(ctx, t, base+"/readyz", http.StatusServiceUnavailable)
	if c := checkNamed(notReady, "redis"); c == nil || c.OK {
		t.Errorf("readyz with Redis down: redis check %+v, want failed", c)
	}
	if code, r := probe(ctx, t, base+"/healthz"); code != http.StatusOK {
		t.Errorf("healthz with Redis down: %d %+v, want 200 (alive)", code, r)
	}
	run.Signal(syscall.SIGTERM)
	if code := run.Wait(ctx); code != 0 {
		t.Errorf("run: exit %d\n%s", code, run.Output())
	}
}

// promtoolPath returns promtool's path; without it the test skips, or
// fails under SHARDPIPE_REQUIRE_INTEGRATION=1 (scripts/services.sh
// installs Debian's prometheus package, which has it).
func promtoolPath(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("promtool")
	if err != nil {
		if os.Getenv(integration.EnvRequire) == "1" {
			t.Fatalf("promtool not found (%v): install Debian's prometheus package (apt-get install prometheus)", err)
		}
		t.Skipf("promtool not found (%v): install Debian's prometheus package to run this test", err)
	}
	return p
}

// probeReport is a /healthz or /readyz answer.
type probeReport struct {
	OK     bool `json:"ok"`
	Checks []struct {
		Name   string `json:"name"`
		OK     bool   `json:"ok"`
		Detail string `json:"detail"`
	} `json:"checks"`
}

func probe(ctx context.Context, t *testing.T, url string) (int, probeReport) {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	var r probeReport
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		t.Fatalf("GET %s: body is not a report: %v", url, err)
	}
	return resp.StatusCode, r
}

// awaitProbe polls url until it answers want, and returns that answer.
func awaitProbe(ctx context.Context, t *testing.T, url string, want int) probeReport {
	t.Helper()
	for {
		code, r := probe(ctx, t, url)
		if code == want {
			if r.OK != (want == http.StatusOK) {
				t.Errorf("%s answered %d with ok=%v", url, code, r.OK)
			}
			return r
		}
		if ctx.Err() != nil {
			t.Fatalf("%s never answered %d; last %d %+v", url, want, code, r)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func checkNamed(r probeReport, name string) *struct {
	Name   string `json:"name"`
	OK     bool   `json:"ok"`
	Detail string `json:"detail"`
} {
	for i := range r.Checks {
		if r.Checks[i].Name == name {
			return &r.Checks[i]
		}
	}
	return nil
}

// checkNames fails unless r has exactly the named checks, all passing.
func checkNames(t *testing.T, probe string, r probeReport, names ...string) {
	t.Helper()
	if len(r.Checks) != len(names) {
		t.Errorf("%s: checks %+v, want %v", probe, r.Checks, names)
	}
	for _, n := range names {
		if c := checkNamed(r, n); c == nil || !c.OK {
			t.Errorf("%s: check %s = %+v, want passing", probe, n, c)
		}
	}
}

// scrapeMetrics returns /metrics' text and its parsed families.
func scrapeMetrics(ctx context.Context, t *testing.T, base string) (string, map[string]*dto.MetricFamily) {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/metrics", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(strings.NewReader(string(raw)))
	if err != nil {
		t.Fatalf("parse /metrics: %v\n%s", err, raw)
	}
	return string(raw), fams
}

// sum adds a counter's or gauge's values over its series.
func sum(fams map[string]*dto.MetricFamily, name string) float64 {
	var s float64
	for _, m := range fams[name].GetMetric() {
		s += m.GetCounter().GetValue() + m.GetGauge().GetValue()
	}
	return s
}

// histCount adds a histogram's sample counts over its series.
func histCount(fams map[string]*dto.MetricFamily, name string) uint64 {
	var n uint64
	for _, m := range fams[name].GetMetric() {
		n += m.GetHistogram().GetSampleCount()
	}
	return n
}
