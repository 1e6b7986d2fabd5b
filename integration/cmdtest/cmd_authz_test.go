package cmdtest_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/plain"

	"github.com/shardpipe/shardpipe/integration"
	"github.com/shardpipe/shardpipe/internal/harness/itest"
	"github.com/shardpipe/shardpipe/internal/topics"
)

// securedKafka is a broker of one test with an authorizer (StandardAuthorizer
// under KRaft): its own listeners (BROKER, CONTROLLER) use SASL/PLAIN as
// User:admin, the only super user; clients of the PLAINTEXT listener (as
// shardpipe run connects) are User:ANONYMOUS, an ordinary principal with
// only the ACLs a test grants.
type securedKafka struct {
	plain   string       // PLAINTEXT listener: User:ANONYMOUS
	admin   *kadm.Client // on the BROKER listener as User:admin
	adminCl *kgo.Client
}

// startSecuredKafka starts the broker with scripts/services.sh from the
// Kafka jars it fetched (SHARDPIPE_KAFKA_EXTRA_CONFIG adds the listeners,
// SASL and the authorizer) and stops it at cleanup. Without Java or the
// jars the test is skipped, or failed when integration is required.
func startSecuredKafka(t *testing.T) *securedKafka {
	t.Helper()
	jars, _ := filepath.Glob(filepath.Join(itest.RepoRoot(t), ".cache", "kafka-*", ".complete"))
	_, jerr := exec.LookPath("java")
	if len(jars) == 0 || jerr != nil {
		msg := "a broker of this test's own needs java and the Kafka jars: run 'scripts/services.sh fetch kafka' (make test does)"
		if integration.Required() {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	taken := map[int]bool{}
	port, cport, bport := itest.FreeLowPort(t, taken), itest.FreeLowPort(t, taken), itest.FreeLowPort(t, taken)
	dir := t.TempDir()
	jaas := `org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="admin-secret" user_admin="admin-secret";`
	extra := fmt.Sprintf(`listeners=PLAINTEXT://127.0.0.1:%[1]d,BROKER://127.0.0.1:%[3]d,CONTROLLER://127.0.0.1:%[2]d
advertised.listeners=PLAINTEXT://127.0.0.1:%[1]d,BROKER://127.0.0.1:%[3]d
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,BROKER:SASL_PLAINTEXT,CONTROLLER:SASL_PLAINTEXT
inter.broker.listener.name=BROKER
sasl.enabled.mechanisms=PLAIN
sasl.mechanism.inter.broker.protocol=PLAIN
sasl.mechanism.controller.protocol=PLAIN
listener.name.broker.plain.sasl.jaas.config=%[4]s
listener.name.controller.plain.sasl.jaas.config=%[4]s
authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer
super.users=User:admin
`, port, cport, bport, jaas)
	extraFile := filepath.Join(dir, "secured.properties")
	if err := os.WriteFile(extraFile, []byte(extra), 0o600); err != nil {
		t.Fatal(err)
	}
	services := func(args ...string) ([]byte, error) {
		cmd := exec.Command(filepath.Join(itest.RepoRoot(t), "scripts", "services.sh"), args...)
		cmd.Env = append(itest.WithoutShardpipeEnv(), "SHARDPIPE_SERVICES_DIR="+filepath.Join(dir, "services"),
			"SHARDPIPE_KAFKA_PORT="+strconv.Itoa(port), "SHARDPIPE_KAFKA_CONTROLLER_PORT="+strconv.Itoa(cport),
			"SHARDPIPE_KAFKA_EXTRA_CONFIG="+extraFile, "SHARDPIPE_READY_TIMEOUT=90s")
		return cmd.CombinedOutput()
	}
	t.Cleanup(func() {
		if out, err := services("stop", "kafka"); err != nil {
			t.Errorf("stop the secured broker: %v\n%s", err, out)
		}
	})
	if out, err := services("start", "kafka"); err != nil {
		t.Fatalf("start the secured broker: %v\n%s", err, out)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers("127.0.0.1:"+strconv.Itoa(bport)),
		kgo.SASL(plain.Auth{User: "admin", Pass: "admin-secret"}.AsMechanism()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return &securedKafka{plain: "127.0.0.1:" + strconv.Itoa(port), admin: kadm.NewClient(cl), adminCl: cl}
}

// allow grants User:ANONYMOUS ops on the ACL builder's resources.
func (k *securedKafka) allow(ctx context.Context, t *testing.T, b *kadm.ACLBuilder, ops ...kadm.ACLOperation) {
	t.Helper()
	res, err := k.admin.CreateACLs(ctx, b.Allow("User:ANONYMOUS").AllowHosts("*").Operations(ops...).ResourcePatternType(kadm.ACLPatternLiteral))
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

// awaitTopicAllowed waits until User:ANONYMOUS (the plain listener) may
// describe topic: the authorizer applies new ACLs from the metadata log a
// moment after CreateACLs answers, and a loaded machine stretches that
// moment past run's start-up check (seen: exit 3 with
// TOPIC_AUTHORIZATION_FAILED where the group's refusal was awaited).
func (k *securedKafka) awaitTopicAllowed(ctx context.Context, t *testing.T, topic string) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(k.plain))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	for {
		md, err := adm.Metadata(ctx, topic)
		if err == nil {
			if td, ok := md.Topics[topic]; ok && td.Err == nil {
				return
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("topic %s: the ACL for User:ANONYMOUS never took effect (last: %v)", topic, err)
		case <-time.After(50 * time.Millisecond): // poll interval of a condition
		}
	}
}

// TestCmdRunAuthorizationError: run exits 3 or 1, naming the authorization
// error, on a real broker with an authorizer, when its principal may read
// the topic but not use the consumer group (no Read on the group):
//
//   - from the start: the preflight's DescribeGroups is refused with
//     GROUP_AUTHORIZATION_FAILED: exit 3 naming the authorization step
//     (before, JoinGroup's refusal made it exit 1);
//   - while running: the group's Read is revoked after run applied the
//     first record; heartbeats and commits are refused the same way.
func TestCmdRunAuthorizationError(t *testing.T) {
	t.Parallel()
	addr := integration.Redis(t)
	k := startSecuredKafka(t)
	bin := itest.BuildShardpipe(t)
	rdb := integration.NewRedisClient(t, addr)
	for _, revoke := range []bool{false, true} {
		name := "no group permission"
		if revoke {
			name = "group permission revoked while running"
		}
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			topic, group := integration.Topic(t), integration.Group(t)
			if _, err := topics.Create(ctx, k.admin, topics.Spec{Name: topic, Partitions: 1}); err != nil {
				t.Fatal(err)
			}
			if err := k.adminCl.ProduceSync(ctx, &kgo.Record{Topic: topic, Key: []byte("k1"), Value: []byte("{}")}).FirstErr(); err != nil {
				t.Fatalf("produce: %v", err)
			}
			k.allow(ctx, t, kadm.NewACLs().Topics(topic), kadm.OpDescribe, kadm.OpRead, kadm.OpDescribeConfigs)
			k.awaitTopicAllowed(ctx, t, topic)
			groupACL := kadm.NewACLs().Groups(group)
			if revoke {
				k.allow(ctx, t, groupACL, kadm.OpRead, kadm.OpDescribe)
			}
			prefix := integration.RedisPrefix(t, rdb)
			run := itest.Start(t, "run", bin, "run", "--brokers", k.plain, "--topic", topic, "--group", group,
				"--redis", addr, "--ledger-prefix", prefix+"ledger:", "--dlq-prefix", prefix, "--on-poison", "stop",
				"--commit-interval", "100ms", "--report-interval", "50ms", "--session-timeout", "6s", "--log-format", "json")
			if revoke {
				run.WaitLine(ctx, "progress", func(m map[string]any) bool { return itest.Num(m, "applied") == 1 })
				res, err := k.admin.DeleteACLs(ctx, kadm.NewACLs().Groups(group).Allow("User:ANONYMOUS").AllowHosts("*").
					Operations(kadm.OpRead, kadm.OpDescribe).ResourcePatternType(kadm.ACLPatternLiteral))
				if err == nil {
					for _, r := range res {
						if r.Err != nil {
							err = r.Err
						}
					}
				}
				if err != nil {
					t.Fatalf("delete the group ACL: %v", err)
				}
			}
			// Without any group ACL the preflight's DescribeGroups is
			// refused: exit 3; revoked while running: exit 1.
			want := 3
			if revoke {
				want = 1
			}
			if code := run.Wait(ctx); code != want {
				t.Fatalf("run exit %d, want %d\n%s", code, want, run.Output())
			}
			out := run.Output()
			if !strings.Contains(out, "GROUP_AUTHORIZATION_FAILED") {
				t.Fatalf("run's output does not name GROUP_AUTHORIZATION_FAILED:\n%s", out)
			}
			for _, line := range strings.Split(out, "\n") {
				if strings.Contains(line, "pipeline stopping on error") {
					t.Log(line)
				}
			}
		})
	}
}
