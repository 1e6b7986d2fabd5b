package main

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/shardpipe/shardpipe/internal/topics"
)

// retentionCase is a topic with its retention.ms and the warning wanted
// ("" for none).
type retentionCase struct{ topic, retentionMS, want string }

// checkRetentionWarnings creates each case's topic on a fake broker, runs
// warn on it alone and wants exactly one warning containing want, or
// nothing.
func checkRetentionWarnings(t *testing.T, cases []retentionCase, warn func(context.Context, *kadm.Client, []string, *slog.Logger)) {
	t.Helper()
	broker, _, _ := fakes(t)
	cl, err := kgo.NewClient(kgo.SeedBrokers(broker))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, tt := range cases {
		v := tt.retentionMS
		if _, err := topics.Create(ctx, adm, topics.Spec{Name: tt.topic, Partitions: 1,
			Configs: map[string]*string{"retention.ms": &v}}); err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		warn(ctx, adm, []string{tt.topic}, slog.New(slog.NewTextHandler(&buf, nil)))
		lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
		switch {
		case tt.want == "" && buf.Len() != 0:
			t.Errorf("%s: logged %q, want nothing", tt.topic, buf.String())
		case tt.want != "" && (len(lines) != 1 || !strings.Contains(lines[0], "level=WARN") || !strings.Contains(lines[0], tt.want)):
			t.Errorf("%s: logged %q, want one warning containing %q", tt.topic, lines, tt.want)
		}
	}
}

// TestWarnRetention: one warning naming the topic, its retention and the
// TTL when the retention is longer than the TTL or infinite; none otherwise.
func TestWarnRetention(t *testing.T) {
	checkRetentionWarnings(t, []retentionCase{
		{"shorter", "3600000", ""},
		{"equal", "7200000", ""},
		{"longer", "10800000", "topic=longer retention=3h0m0s ttl=2h0m0s"},
		{"infinite", "-1", "topic=infinite retention=infinite ttl=2h0m0s"},
	}, func(ctx context.Context, adm *kadm.Client, ts []string, log *slog.Logger) {
		warnRetention(ctx, adm, ts, 2*time.Hour, log)
	})
}

// TestWarnInboxRetention: with --sql-inbox-keep, one warning naming the
// topic, its retention and the keep when the retention is longer or
// infinite; none otherwise.
func TestWarnInboxRetention(t *testing.T) {
	checkRetentionWarnings(t, []retentionCase{
		{"kept-shorter", "3600000", ""},
		{"kept-equal", "86400000", ""},
		{"kept-longer", "172800000", "topic=kept-longer retention=48h0m0s sql_inbox_keep=24h0m0s"},
		{"kept-infinite", "-1", "topic=kept-infinite retention=infinite sql_inbox_keep=24h0m0s"},
	}, func(ctx context.Context, adm *kadm.Client, ts []string, log *slog.Logger) {
		warnInboxRetention(ctx, adm, ts, 24*time.Hour, log)
	})
}

// TestRunMissingDeadLetterTopic: with --on-poison dlq (the default) and
// --create-dlq-topic=false a missing dead-letter topic gives exit 3 and one
// line naming it.
func TestRunMissingDeadLetterTopic(t *testing.T) {
	broker, redisAddr, _ := fakes(t)
	cl, err := kgo.NewClient(kgo.SeedBrokers(broker))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if _, err := topics.Create(context.Background(), kadm.NewClient(cl), topics.Spec{Name: "orders", Partitions: 1}); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{nil, `kafka: dead-letter topic "orders.dlq" does not exist`},
		{[]string{"--dlq-topic", "dead"}, `kafka: dead-letter topic "dead" does not exist`},
	} {
		args := append([]string{"run", "--brokers", broker, "--redis", redisAddr, "--topic", "orders", "--connect-timeout", "5s",
			"--create-dlq-topic=false"}, tt.args...)
		code, _, stderr := call(t, nil, args...)
		lines := problemLines(stderr)
		if code != exitUnavailable || len(lines) != 1 || !strings.Contains(lines[0], tt.want) {
			t.Fatalf("%v: exit %d, lines %q; want exit %d and one line containing %q", tt.args, code, lines, exitUnavailable, tt.want)
		}
	}
}
