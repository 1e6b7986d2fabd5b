package cmdtest_test

import (
	"context"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/shardpipe/shardpipe/integration"
	"github.com/shardpipe/shardpipe/internal/harness/itest"
)

// TestBenchSmall runs `shardpipe bench` end to end on the real servers with
// a tiny topic: every mode measures something (the guard modes too, against
// the receiver bench serves, on 200 orders, and the scripted ceiling, which
// runs the ledger's claim+totals script on the real Redis), the replay
// applies nothing
// (bench itself refuses a round whose counts are off), the ratios and the
// latency are reported, and a second run reuses the pre-filled topic. It
// says nothing about speed.
func TestBenchSmall(t *testing.T) {
	brokers, addr := integration.Kafka(t), integration.Redis(t)
	bin := itest.BuildShardpipe(t)
	topic := integration.Topic(t)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_, _ = integration.NewAdmin(t, brokers).DeleteTopic(ctx, topic)
	})
	run := func() (report, string) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, bin, "bench", "--brokers", strings.Join(brokers, ","), "--redis", addr,
			"--bench-topic", topic, "--records", "2000", "--partitions", "4", "--rounds", "1", "--naive-records", "100",
			"--latency-rate", "1000", "--latency-duration", "1s", "--guard-records", "200", "--json")
		cmd.Env = itest.WithoutShardpipeEnv()
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("bench: %v\n%s", err, stderr.String())
		}
		var r report
		if err := json.Unmarshal(out, &r); err != nil {
			t.Fatalf("bench JSON: %v\n%s", err, out)
		}
		return r, stderr.String()
	}
	r, _ := run()
	if len(r.Modes) != 11 {
		t.Fatalf("%d modes, want 11: %+v", len(r.Modes), r.Modes)
	}
	if r.Modes[2].Mode != "ledger" || r.Modes[3].Mode != "scripted" {
		t.Errorf("modes %s and %s third and fourth, want the ledger and scripted ceilings right after the sink ceiling", r.Modes[2].Mode, r.Modes[3].Mode)
	}
	for _, m := range r.Modes {
		want, atLeast := int64(2000), false
		switch m.Mode {
		case "naive":
			want = 100
		case "guard-seq": // a twentieth of --guard-records, at least 50
			want, atLeast = 50, true
		case "guard-inflight", "guard-0ms": // a round may count a few past its target
			want, atLeast = 200, true
		}
		if m.Records != want && !(atLeast && m.Records > want) || m.RecordsPerSec.Median <= 0 || m.CPUSecPerM.Median <= 0 || m.PeakRSSMB.Median <= 0 {
			t.Errorf("mode %s: %+v", m.Mode, m)
		}
		// Redis's own time, read from INFO cpu around each round: every mode
		// but the consume ceiling sends Redis its work.
		if uses := m.Mode != "consume"; uses != (m.RedisCPUSecPerM.Median > 0 && m.RedisBusy.Median > 0) {
			t.Errorf("mode %s: Redis CPU s per 1M %v, busy %v; want both positive exactly when the mode uses Redis",
				m.Mode, m.RedisCPUSecPerM.Median, m.RedisBusy.Median)
		}
	}
	if r.Ratios.DOverCeiling <= 0 || r.Ratios.DOverNaive <= 0 || r.Ratios.EOverD <= 0 || r.Ratios.EOverScripted <= 0 ||
		r.Ratios.DOverLedger <= 0 || r.Ratios.RedisDOverLedger <= 0 || r.Ratios.LedgerOverSink <= 0 || r.Ratios.FOverCeiling <= 0 || r.Ratios.HOverG <= 0 || r.Ratios.HOverI <= 0 {
		t.Errorf("ratios %+v: want all positive", r.Ratios)
	}
	if len(r.Targets) != 11 {
		t.Errorf("%d targets, want 11 (seven ratios, four costs): %+v", len(r.Targets), r.Targets)
	}
	for _, tg := range r.Targets {
		if tg.Value <= 0 || tg.Bound <= 0 {
			t.Errorf("target %+v: want its value measured and a bound", tg)
		}
	}
	if r.Latency == nil || r.Latency.P99ms.Median <= 0 || r.Latency.P50ms.Median > r.Latency.P99ms.Median {
		t.Errorf("latency %+v", r.Latency)
	}
	if _, stderr := run(); !strings.Contains(stderr, "reusing pre-filled topic") {
		t.Errorf("second run did not reuse the topic:\n%s", stderr)
	}
}

type stat struct {
	Median float64 `json:"median"`
}

type report struct {
	Modes []struct {
		Mode          string `json:"mode"`
		Records       int64  `json:"records"`
		RecordsPerSec stat   `json:"records_per_sec"`
		CPUSecPerM    stat   `json:"cpu_seconds_per_million"`
		PeakRSSMB     stat   `json:"peak_rss_mb"`
		// Redis's main thread over the mode's rounds
		RedisCPUSecPerM stat `json:"redis_cpu_seconds_per_million"`
		RedisBusy       stat `json:"redis_busy"`
	} `json:"modes"`
	Ratios struct {
		DOverCeiling float64 `json:"d_over_ceiling"`
		DOverNaive   float64 `json:"d_over_naive"`
		EOverD       float64 `json:"e_over_d"`
		FOverCeiling float64 `json:"f_over_ceiling"`
		HOverG       float64 `json:"h_over_g"`
		HOverI       float64 `json:"h_over_i"`
		// e / the scripted ceiling
		EOverScripted float64 `json:"e_over_scripted"`
		// d / the ledger ceiling, and the ledger ceiling / b
		DOverLedger    float64 `json:"d_over_ledger"`
		LedgerOverSink float64 `json:"ledger_over_sink"`
		// (d)'s Redis CPU per record over (k)'s
		RedisDOverLedger float64 `json:"redis_cpu_per_record_d_over_k"`
	} `json:"ratios"`
	Targets []struct {
		Name  string  `json:"name"`
		Value float64 `json:"value"`
		Bound float64 `json:"bound"`
	} `json:"targets"`
	Latency *struct {
		P50ms stat `json:"p50_ms"`
		P99ms stat `json:"p99_ms"`
	} `json:"latency"`
}
