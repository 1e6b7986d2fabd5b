package cmdtest_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/shardpipe/shardpipe/integration"
	"github.com/shardpipe/shardpipe/internal/harness/itest"
)

// TestCmdStatusPageInBrowser loads /status in headless Chromium while
// `shardpipe run` consumes, once every record has landed and been
// committed: the page the browser rendered (its script fetches
// status.json) shows per partition the same owner, committed offset, lag,
// applied, suppressed, dead-lettered and fenced-commit figures as /metrics.
// It keeps a screenshot (copied to $SHARDPIPE_STATUS_SCREENSHOT when set).
func TestCmdStatusPageInBrowser(t *testing.T) {
	const partitions, orders, dups = 3, 200, 20
	chromium := browserPath(t)
	brokers, addr := integration.Kafka(t), integration.Redis(t)
	bin := itest.BuildShardpipe(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	topic := integration.CreateTopic(t, brokers, partitions)
	integration.CreateDeadLetterTopic(t, brokers, topic, partitions)
	rdb := integration.NewRedisClient(t, addr)
	prefix := integration.RedisPrefix(t, rdb)
	prod := integration.NewKafkaClient(t, brokers, kgo.DefaultProduceTopic(topic))
	var recs []*kgo.Record
	for i := range orders + dups { // the last dups re-send orders: suppressed
		recs = append(recs, &kgo.Record{Key: fmt.Appendf(nil, "o-%d", i%orders), Value: []byte("{}")})
	}
	recs = append(recs, &kgo.Record{Key: nil, Value: []byte("{}")}) // a poison record: dead-lettered
	if err := prod.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	group := integration.Group(t)
	run := itest.Start(t, "run", bin, "run", "--brokers", strings.Join(brokers, ","), "--topic", topic, "--group", group,
		"--redis", addr, "--ledger-prefix", prefix+"l:", "--dlq-prefix", prefix+"own:", "--poison-attempts", "1",
		"--commit-interval", "100ms", "--metrics-addr", "127.0.0.1:0", "--log-format", "json")
	base := metricsAddr(ctx, run)
	var fams map[string]*dto.MetricFamily
	for {
		_, fams = scrapeMetrics(ctx, t, base)
		if sum(fams, "shardpipe_effects_applied_total") == orders && sum(fams, "shardpipe_records_dead_lettered_total") == 1 &&
			len(fams["shardpipe_lag_records"].GetMetric()) == partitions && sum(fams, "shardpipe_lag_records") == 0 {
			break
		}
		if ctx.Err() != nil {
			t.Fatal("the run never landed and committed every record")
		}
		time.Sleep(100 * time.Millisecond)
	}

	dir := t.TempDir()
	shot := filepath.Join(dir, "status.png")
	dom := browse(ctx, t, chromium, dir, "--dump-dom", base+"/status")
	browse(ctx, t, chromium, dir, "--screenshot="+shot, "--window-size=1500,300", base+"/status")
	if fi, err := os.Stat(shot); err != nil || fi.Size() == 0 {
		t.Errorf("no screenshot: %v", err)
	} else if to := os.Getenv("SHARDPIPE_STATUS_SCREENSHOT"); to != "" {
		if raw, err := os.ReadFile(shot); err == nil {
			_ = os.WriteFile(to, raw, 0o644)
		}
	}
	if !strings.Contains(dom, `data-loaded="true"`) || !strings.Contains(dom, "group "+group) {
		t.Fatalf("the browser did not render the status (no data-loaded, or not group %s):\n%s", group, dom)
	}
	rows := renderedRows(dom)
	if len(rows) != partitions {
		t.Fatalf("rendered %d partition rows, want %d:\n%s", len(rows), partitions, dom)
	}
	metric := map[string]string{"committed": "shardpipe_committed_offset", "lag": "shardpipe_lag_records",
		"applied": "shardpipe_effects_applied_total", "suppressed": "shardpipe_effects_suppressed_total",
		"dead_lettered": "shardpipe_records_dead_lettered_total", "fenced_commits": "shardpipe_commits_fenced_total",
		"epoch": "shardpipe_partition_epoch"}
	var suppressed, dead int
	for p := range partitions {
		row := rows[fmt.Sprintf("%s/%d", topic, p)]
		if row == nil {
			t.Fatalf("no row for partition %d:\n%s", p, dom)
		}
		for field, name := range metric {
			if want := seriesValue(fams, name, p); row[field] != want {
				t.Errorf("partition %d: page shows %s %q, /metrics %s %q", p, field, row[field], name, want)
			}
		}
		if row["owner"] == "" {
			t.Errorf("partition %d: no owner shown", p)
		}
		var n int
		fmt.Sscan(row["suppressed"], &n)
		suppressed += n
		fmt.Sscan(row["dead_lettered"], &n)
		dead += n
	}
	if suppressed != dups || dead != 1 {
		t.Errorf("page shows %d suppressed and %d dead-lettered, want %d and 1", suppressed, dead, dups)
	}
	run.Signal(syscall.SIGTERM)
	if code := run.Wait(ctx); code != 0 {
		t.Errorf("run: exit %d\n%s", code, run.Output())
	}
}

// browserPath returns Chromium's path; without it the test skips, or fails
// under SHARDPIPE_REQUIRE_INTEGRATION=1 (scripts/services.sh installs
// Debian's chromium package).
func browserPath(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv(integration.EnvRequire) == "1" {
		t.Fatal("chromium not found: install Debian's chromium package (apt-get install chromium)")
	}
	t.Skip("chromium not found: install Debian's chromium package to run this test")
	return ""
}

// browse runs headless Chromium on args with its profile in dir and
// returns its standard output. The virtual time budget lets the page's
// script fetch and render status.json before the DOM is dumped.
func browse(ctx context.Context, t *testing.T, chromium, dir string, args ...string) string {
	t.Helper()
	all := append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
		"--user-data-dir=" + filepath.Join(dir, "profile"), "--virtual-time-budget=5000"}, args...)
	cmd := exec.CommandContext(ctx, chromium, all...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("chromium %v: %v\n%s", args, err, stderr.String())
	}
	return string(out)
}

var (
	rowRE  = regexp.MustCompile(`(?s)<tr data-partition="([^"]+)"[^>]*>(.*?)</tr>`)
	cellRE = regexp.MustCompile(`(?s)<td data-field="([^"]+)"[^>]*>(.*?)</td>`)
)

// renderedRows returns each rendered partition row's cells by field.
func renderedRows(dom string) map[string]map[string]string {
	rows := map[string]map[string]string{}
	for _, r := range rowRE.FindAllStringSubmatch(dom, -1) {
		cells := map[string]string{}
		for _, c := range cellRE.FindAllStringSubmatch(r[2], -1) {
			cells[c[1]] = c[2]
		}
		rows[r[1]] = cells
	}
	return rows
}

// seriesValue returns the value of name's series for partition p, as the
// page prints numbers.
func seriesValue(fams map[string]*dto.MetricFamily, name string, p int) string {
	for _, m := range fams[name].GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == "partition" && l.GetValue() == fmt.Sprint(p) {
				return fmt.Sprint(int64(m.GetCounter().GetValue() + m.GetGauge().GetValue()))
			}
		}
	}
	return "(none)"
}
