package integration_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/shardpipe/shardpipe/integration"
	"github.com/shardpipe/shardpipe/integration/scenario"
	"github.com/shardpipe/shardpipe/internal/harness/itest"
	"github.com/shardpipe/shardpipe/internal/harness/testcerts"
	"github.com/shardpipe/shardpipe/secure"
)

// TestSecureKafkaSteps connects with package secure's settings to a real
// broker's TLS listeners and checks, per case, that a good setting reaches
// the broker (a Metadata request answers) and a bad one fails at the step
// Diagnose names: TCP connect, TLS handshake (unknown authority, name
// mismatch, expired, no client certificate, not TLS), SASL mechanism not
// enabled (AWS_MSK_IAM on a broker without it), authentication (wrong
// password, wrong user) and authorization (a topic the user may not
// describe).
func TestSecureKafkaSteps(t *testing.T) {
	t.Parallel()
	k := itest.StartTLSKafka(t)
	dir := t.TempDir()
	client, err := k.Ca.Issue(testcerts.Spec{Name: "shardpipe-client", Client: true})
	if err != nil {
		t.Fatal(err)
	}
	otherCA, err := testcerts.NewCA(dir, "other-ca")
	if err != nil {
		t.Fatal(err)
	}
	tokenFile := filepath.Join(dir, "token")
	if err := os.WriteFile(tokenFile, []byte(itest.UnsecuredJWT("carol", time.Hour)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	caTLS := secure.TLS{CAFile: k.Ca.CertFile}
	pw := func(s string) secure.Secret { return secure.NewSecret(s, "test") }
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	topic := "secure-steps"
	if _, err := k.Admin.CreateTopic(ctx, 1, 1, nil, topic); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		addr     string
		settings secure.Kafka
		step     secure.Step // "" for success
		reason   string      // in the StepError's Reason
	}{
		{"PLAIN over TLS", k.Sasl, secure.Kafka{TLS: caTLS, SASL: secure.SASL{Mechanism: "PLAIN", User: itest.PlainUser, Password: pw(itest.PlainPass)}}, "", ""},
		{"SCRAM-SHA-256 over TLS", k.Sasl, secure.Kafka{TLS: caTLS, SASL: secure.SASL{Mechanism: "scram-sha-256", User: itest.ScramUser, Password: pw(itest.ScramPass)}}, "", ""},
		{"SCRAM-SHA-512 over TLS", k.Sasl, secure.Kafka{TLS: caTLS, SASL: secure.SASL{Mechanism: "SCRAM-SHA-512", User: itest.ScramUser, Password: pw(itest.ScramPass)}}, "", ""},
		{"OAUTHBEARER token file", k.Sasl, secure.Kafka{TLS: caTLS, SASL: secure.SASL{Mechanism: "OAUTHBEARER", TokenFile: tokenFile}}, "", ""},
		{"OAUTHBEARER token command", k.Sasl, secure.Kafka{TLS: caTLS, SASL: secure.SASL{Mechanism: "OAUTHBEARER", TokenCommand: []string{"cat", tokenFile}}}, "", ""},
		{"mTLS", k.Mtls, secure.Kafka{TLS: secure.TLS{CAFile: k.Ca.CertFile, CertFile: client.CertFile, KeyFile: client.KeyFile}}, "", ""},
		{"server name override", k.Sasl, secure.Kafka{TLS: secure.TLS{CAFile: k.Ca.CertFile, ServerName: "localhost"}, SASL: secure.SASL{Mechanism: "PLAIN", User: itest.PlainUser, Password: pw(itest.PlainPass)}}, "", ""},

		{"connect refused", "127.0.0.1:1", secure.Kafka{TLS: caTLS}, secure.StepConnect, "connection refused"},
		{"unknown authority", k.Sasl, secure.Kafka{TLS: secure.TLS{CAFile: otherCA.CertFile}, SASL: secure.SASL{Mechanism: "PLAIN", User: itest.PlainUser, Password: pw(itest.PlainPass)}}, secure.StepTLS, "unknown authority"},
		{"name mismatch", k.Sasl, secure.Kafka{TLS: secure.TLS{CAFile: k.Ca.CertFile, ServerName: "kafka.example.com"}, SASL: secure.SASL{Mechanism: "PLAIN", User: itest.PlainUser, Password: pw(itest.PlainPass)}}, secure.StepTLS, "name mismatch"},
		{"expired", k.Expired, secure.Kafka{TLS: caTLS}, secure.StepTLS, "expired"},
		{"no client certificate", k.Mtls, secure.Kafka{TLS: caTLS}, secure.StepTLS, "tls"},
		{"TLS to a plaintext listener", k.Broker, secure.Kafka{TLS: caTLS, SASL: secure.SASL{Mechanism: "PLAIN", User: "admin", Password: pw("admin-secret")}}, secure.StepTLS, "using TLS when the broker is not expecting it"},
		{"plaintext to a TLS listener", k.Sasl, secure.Kafka{SASL: secure.SASL{Mechanism: "PLAIN", User: itest.PlainUser, Password: pw(itest.PlainPass)}}, secure.StepTLS, "the client does not"},
		{"mechanism not enabled", k.Sasl, secure.Kafka{TLS: caTLS, SASL: secure.SASL{Mechanism: "AWS_MSK_IAM", AWS: secure.AWSCredentials{AccessKey: "AKIDEXAMPLE", SecretKey: pw("aws-Secr3t")}}}, secure.StepMechanism, "does not enable"},
		{"wrong password", k.Sasl, secure.Kafka{TLS: caTLS, SASL: secure.SASL{Mechanism: "SCRAM-SHA-512", User: itest.ScramUser, Password: pw("not-the-password")}}, secure.StepAuthentication, "wrong user or password"},
		{"unknown user", k.Sasl, secure.Kafka{TLS: caTLS, SASL: secure.SASL{Mechanism: "PLAIN", User: "mallory", Password: pw(itest.PlainPass)}}, secure.StepAuthentication, "wrong user or password"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts, err := tt.settings.Opts()
			if err != nil {
				t.Fatal(err)
			}
			cl, err := kgo.NewClient(append(opts, kgo.SeedBrokers(tt.addr), kgo.DialTimeout(5*time.Second), kgo.RetryTimeout(5*time.Second))...)
			if err != nil {
				t.Fatal(err)
			}
			defer cl.Close()
			cctx, ccancel := context.WithTimeout(ctx, 20*time.Second)
			defer ccancel()
			_, err = kadm.NewClient(cl).BrokerMetadata(cctx)
			if tt.step == "" {
				if err != nil {
					t.Fatalf("metadata: %v (diagnosed: %v)", err, secure.Diagnose(err))
				}
				return
			}
			if err == nil {
				t.Fatalf("metadata succeeded, want a failure at %s", tt.step)
			}
			d := secure.Diagnose(err)
			if d == nil {
				t.Fatalf("Diagnose(%v) = nil, want step %s", err, tt.step)
			}
			if d.Step != tt.step || !strings.Contains(d.Reason, tt.reason) {
				t.Fatalf("Diagnose(%v) = %v, want step %s with %q", err, d, tt.step, tt.reason)
			}
			t.Logf("%v -> %v", err, d)
		})
	}
	t.Run("scenarios", func(t *testing.T) { secureScenarios(ctx, t, k) })
	t.Run("authorization", func(t *testing.T) {
		opts, err := secure.Kafka{TLS: caTLS, SASL: secure.SASL{Mechanism: "SCRAM-SHA-256", User: itest.ScramUser, Password: pw(itest.ScramPass)}}.Opts()
		if err != nil {
			t.Fatal(err)
		}
		cl, err := kgo.NewClient(append(opts, kgo.SeedBrokers(k.Sasl))...)
		if err != nil {
			t.Fatal(err)
		}
		defer cl.Close()
		td, err := kadm.NewClient(cl).ListTopics(ctx, topic)
		if err == nil {
			err = td.Error()
		}
		d := secure.Diagnose(err)
		if d == nil || d.Step != secure.StepAuthorization {
			t.Fatalf("describe %s without an ACL: %v, diagnosed %v; want step authorization", topic, err, d)
		}
		t.Logf("%v -> %v", err, d)
	})
}

// secureScenarios runs the seed parity and the rebalance (crash-leave)
// scenarios with Setup.Kafka (SASL_SSL, PLAIN, the test CA) and
// Setup.RedisSecurity (TLS, an ACL user), as TestSeedParity and
// TestRebalance do in the clear.
func secureScenarios(ctx context.Context, t *testing.T, k *itest.TlsKafka) {
	for _, b := range []*kadm.ACLBuilder{kadm.NewACLs().Topics("*"), kadm.NewACLs().Groups("*"), kadm.NewACLs().Clusters()} {
		k.Allow(ctx, t, "User:"+itest.PlainUser, b, kadm.OpAll)
	}
	rs, raddr := itest.TlsRedis(t, k.Ca)
	const redisPass = "kit-redis-Secr3t"
	if err := rs.C.Do(ctx, "ACL", "SETUSER", "kit", "on", ">"+redisPass, "~*", "+@all").Err(); err != nil {
		t.Fatalf("ACL SETUSER: %v", err)
	}
	setup := scenario.Setup{Brokers: []string{k.Sasl}, Redis: raddr,
		Kafka: secure.Kafka{TLS: secure.TLS{CAFile: k.Ca.CertFile},
			SASL: secure.SASL{Mechanism: secure.PLAIN, User: itest.PlainUser, Password: secure.NewSecret(itest.PlainPass, "test")}},
		RedisSecurity: secure.Redis{TLS: secure.TLS{CAFile: k.Ca.CertFile}, User: "kit", Password: secure.NewSecret(redisPass, "test")}}
	t.Run("seed parity", func(t *testing.T) {
		r := integration.CrashBeforeCommit(ctx, t, setup, scenario.CrashConfig{})
		const want = "shard0=250 crash_attempts=37 checkpoint=30 replay=7 applied=1000 suppressed=7"
		if line := r.Line(); line != want {
			t.Errorf("got  %s\nwant %s", line, want)
		}
		integration.RequireExactlyOnce(t, r)
	})
	t.Run("rebalance crash-leave", func(t *testing.T) {
		r := integration.Rebalance(ctx, t, setup, scenario.RebalanceConfig{CrashLeave: true})
		f := r.Rebalance
		t.Logf("%s replays=%d assignments=%d decreases=%d totals_ok=%t", r, f.Replays, f.Assignments, f.OffsetDecreases, f.TotalsOK)
		integration.RequireExactlyOnce(t, r)
		if !f.TotalsOK || len(r.Ledger) != len(r.Keys) || r.Suppressed != f.Replays || f.Replays == 0 || f.OffsetDecreases != 0 {
			t.Errorf("totals_ok=%t ledger=%d keys=%d suppressed=%d replays=%d decreases=%d", f.TotalsOK, len(r.Ledger), len(r.Keys),
				r.Suppressed, f.Replays, f.OffsetDecreases)
		}
	})
}
