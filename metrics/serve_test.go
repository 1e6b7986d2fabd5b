package metrics_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/shardpipe/shardpipe/checkpoint"
	"github.com/shardpipe/shardpipe/metrics"
	"github.com/shardpipe/shardpipe/pipeline"
)

// TestMetricsEndpoint serves a stats snapshot and scrapes it over HTTP: every
// counter and offset appears per partition, and uncommitted work is the gap
// between landed and committed offsets.
func TestMetricsEndpoint(t *testing.T) {
	stats := func() []pipeline.PartitionStats {
		return []pipeline.PartitionStats{
			{Partition: checkpoint.Partition{Topic: "orders", Partition: 0}, Epoch: 3, Held: true, Attempts: 40,
				Applied: 33, Suppressed: 7, Start: 20, Landed: 40, Committed: 30, Fenced: 1},
			{Partition: checkpoint.Partition{Topic: "orders", Partition: 1}, Epoch: 3, Start: -1, Landed: -1, Committed: -1},
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	addr, done, err := metrics.Serve(ctx, "127.0.0.1:0", stats, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { cancel(); <-done }()
	body := scrape(t, addr)
	for _, want := range []string{
		`shardpipe_records_attempted_total{partition="0",topic="orders"} 40`,
		`shardpipe_effects_applied_total{partition="0",topic="orders"} 33`,
		`shardpipe_effects_suppressed_total{partition="0",topic="orders"} 7`,
		`shardpipe_commits_fenced_total{partition="0",topic="orders"} 1`,
		`shardpipe_landed_offset{partition="0",topic="orders"} 40`,
		`shardpipe_committed_offset{partition="0",topic="orders"} 30`,
		`shardpipe_uncommitted_records{partition="0",topic="orders"} 10`,
		`shardpipe_uncommitted_records{partition="1",topic="orders"} 0`,
		`shardpipe_partition_epoch{partition="0",topic="orders"} 3`,
		`shardpipe_partition_held{partition="0",topic="orders"} 1`,
		`shardpipe_partition_held{partition="1",topic="orders"} 0`,
		"# TYPE shardpipe_effects_applied_total counter",
		"# TYPE shardpipe_committed_offset gauge",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("metrics lack %q", want)
		}
	}
	if _, _, err := metrics.Serve(ctx, addr, stats, slog.New(slog.DiscardHandler)); err == nil {
		t.Error("a second server on a busy address started")
	}
}

// scrape returns the text of http://addr/metrics.
func scrape(t *testing.T, addr string) string {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(body)
}
