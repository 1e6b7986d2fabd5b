package cmdtest_test

import (
	"context"
	"encoding/json"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/shardpipe/shardpipe/integration"
	"github.com/shardpipe/shardpipe/internal/harness/itest"
)

// testBenchSecured runs `shardpipe bench` over SASL_SSL (SCRAM-SHA-512,
// the password from SHARDPIPE_KAFKA_SASL_PASSWORD, which the workers
// inherit: their spec names the variable, not the password): every mode
// and the latency measure something; no output holds the password.
// bench's principal may do anything on its topics and groups (prefixed
// ACLs), nothing else.
func testBenchSecured(ctx context.Context, t *testing.T, k *itest.TlsKafka, bin string, outputs *[]string) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	topic := integration.Topic(t)
	for _, b := range []*kadm.ACLBuilder{kadm.NewACLs().Topics(topic), kadm.NewACLs().Groups("shardpipe-bench-")} {
		res, err := k.Admin.CreateACLs(ctx, b.Allow("User:"+itest.ScramUser).AllowHosts("*").Operations(kadm.OpAll).
			ResourcePatternType(kadm.ACLPatternPrefixed))
		if err == nil {
			for _, r := range res {
				if r.Err != nil {
					err = r.Err
				}
			}
		}
		if err != nil {
			t.Fatalf("create ACLs: %v", err)
		}
	}
	k.AwaitACLs(ctx, t, "User:"+itest.ScramUser, 2+len(runTopicOps)+len(runGroupOps))
	cmd := exec.CommandContext(ctx, bin, "bench", "--brokers", k.Sasl, "--kafka-tls-ca", k.Ca.CertFile,
		"--kafka-sasl-mechanism", "SCRAM-SHA-512", "--kafka-sasl-user", itest.ScramUser, "--redis", integration.Redis(t),
		"--bench-topic", topic, "--records", "1000", "--partitions", "2", "--rounds", "1", "--naive-records", "100",
		// The guard modes (TestBenchSmall runs them) are left out: this
		// test is about every Kafka client of bench going over SASL_SSL.
		"--latency-rate", "500", "--latency-duration", "1s", "--guard-records", "0", "--json")
	cmd.Env = append(itest.WithoutShardpipeEnv(), "SHARDPIPE_KAFKA_SASL_PASSWORD="+itest.ScramPass)
	// At ctx's end bench is interrupted (it ends its workers) and waited
	// for at most 10s more.
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 10 * time.Second
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	*outputs = append(*outputs, string(out), stderr.String())
	if err != nil {
		t.Fatalf("bench: %v\n%s", err, lastLines(stderr.String(), 30))
	}
	var r report
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("bench JSON: %v\n%s", err, out)
	}
	if len(r.Modes) != 8 { // a-f and the scripted and ledger ceilings (j, k)
		t.Fatalf("%d modes, want 8: %+v", len(r.Modes), r.Modes)
	}
	for _, m := range r.Modes {
		want := int64(1000)
		if m.Mode == "naive" {
			want = 100
		}
		if m.Records != want || m.RecordsPerSec.Median <= 0 {
			t.Errorf("mode %s: %+v", m.Mode, m)
		}
	}
	if r.Latency == nil || r.Latency.P99ms.Median <= 0 {
		t.Errorf("latency %+v", r.Latency)
	}
}
