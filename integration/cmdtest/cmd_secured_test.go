package cmdtest_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/shardpipe/shardpipe/integration"
	"github.com/shardpipe/shardpipe/internal/harness/itest"
	"github.com/shardpipe/shardpipe/internal/harness/testcerts"
)

// Least privilege, as docs/security.md states it.
var (
	// runTopicOps and runGroupOps are the Kafka ACLs of run's principal
	// (and status's: it needs Describe on both).
	runTopicOps = []kadm.ACLOperation{kadm.OpDescribe, kadm.OpRead, kadm.OpDescribeConfigs}
	runGroupOps = []kadm.ACLOperation{kadm.OpRead, kadm.OpDescribe}
	// produceTopicOps are produce's.
	produceTopicOps = []kadm.ACLOperation{kadm.OpDescribe, kadm.OpWrite}
)

// ledgerACL is the Redis ACL rule of run's user with --effect totals, for
// ledger and totals keys under prefix (docs/security.md's rule).
func ledgerACL(prefix string) []string {
	return []string{"resetkeys", "~" + prefix + "*", "resetchannels", "-@all",
		"+ping", "+info", "+hello", "+client|setname", "+evalsha", "+eval", "+script|load",
		"+get", "+set", "+exists", "+hincrby", "+hget", "+hset", "+hgetall", "+pexpire", "+del", "+wait"}
}

// TestCmdSecured runs the command against a broker that takes only TLS
// and SASL (SASL_SSL, an authorizer) and a Redis reached over TLS as an
// ACL user, each principal holding only the least-privilege ACLs: produce
// (PLAIN, password from the environment) writes orders with re-sends, run
// (SCRAM-SHA-512, password from a file; Redis user and password from a
// file) applies them exactly once (ledger and totals match produce's
// summary), status reports lag 0. Then each preflight failure exits 3 with
// a line naming the step: Kafka wrong password, Kafka mechanism not
// enabled, Kafka unknown authority, Kafka authorization (no group ACL),
// Redis wrong password, Redis unknown authority, Redis NOPERM. No output of
// any run, passing or failing, holds a password.
func TestCmdSecured(t *testing.T) {
	t.Parallel()
	k := itest.StartTLSKafka(t)
	rs, raddr := itest.TlsRedis(t, k.Ca)
	bin := itest.BuildShardpipe(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	dir := t.TempDir()
	const redisPass = "ledger-redis-Secr3t"
	prefix := "sec:"
	if err := rs.C.Do(ctx, append([]any{"ACL", "SETUSER", "ledger", "reset", "on", ">" + redisPass},
		anys(ledgerACL(prefix))...)...).Err(); err != nil {
		t.Fatalf("ACL SETUSER: %v", err)
	}
	passFile := func(name, pw string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(pw+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	scramFile, redisFile := passFile("scram", itest.ScramPass), passFile("redis", redisPass)
	wrongFile := passFile("wrong", "wrong-Secr3t")

	topic, group := integration.Topic(t), integration.Group(t)
	if _, err := k.Admin.CreateTopic(ctx, 2, 1, nil, topic); err != nil {
		t.Fatal(err)
	}
	k.Allow(ctx, t, "User:"+itest.PlainUser, kadm.NewACLs().Topics(topic), produceTopicOps...)
	k.Allow(ctx, t, "User:"+itest.ScramUser, kadm.NewACLs().Topics(topic), runTopicOps...)
	k.Allow(ctx, t, "User:"+itest.ScramUser, kadm.NewACLs().Groups(group), runGroupOps...)

	var outputs []string // every output, grepped for secrets at the end
	defer func() {
		for _, out := range outputs {
			for _, secret := range []string{itest.PlainPass, itest.ScramPass, redisPass, "wrong-Secr3t"} {
				if strings.Contains(out, secret) {
					t.Errorf("a password is in the output:\n%s", out)
				}
			}
		}
	}()
	kafkaTLS := []string{"--brokers", k.Sasl, "--kafka-tls-ca", k.Ca.CertFile}
	scram := append(append([]string{}, kafkaTLS...), "--kafka-sasl-mechanism", "SCRAM-SHA-512", "--kafka-sasl-user", itest.ScramUser,
		"--kafka-sasl-password-file", scramFile)
	redisTLS := []string{"--redis", "rediss://" + raddr, "--redis-tls-ca", k.Ca.CertFile, "--redis-user", "ledger",
		"--redis-password-file", redisFile}
	runArgs := func(kafka, rds []string, extra ...string) []string {
		a := append([]string{"run", "--topic", topic, "--group", group, "--ledger-prefix", prefix + "ledger:", "--dlq-prefix", prefix + "sp:",
			"--effect", "totals", "--totals-hash", prefix + "totals", "--on-poison", "stop", "--commit-interval", "200ms",
			"--report-interval", "100ms", "--session-timeout", "6s", "--connect-timeout", "10s", "--log-format", "json",
			"--log-level", "debug"}, kafka...)
		return append(append(a, rds...), extra...)
	}

	summaryFile := filepath.Join(dir, "summary.json")
	produce := itest.StartEnv(t, "produce", bin, []string{"SHARDPIPE_KAFKA_SASL_PASSWORD=" + itest.PlainPass},
		append(append([]string{"produce", "--topic", topic}, kafkaTLS...), "--kafka-sasl-mechanism", "PLAIN",
			"--kafka-sasl-user", itest.PlainUser, "--count", "300", "--duplicates", "0.1", "--seed", "5", "--summary-json", summaryFile)...)
	code := produce.Wait(ctx)
	outputs = append(outputs, produce.Output())
	if code != 0 {
		t.Fatalf("produce: exit %d\n%s", code, produce.Output())
	}
	var sum struct {
		Records, Unique int
		Totals          map[string]int64
	}
	raw, err := os.ReadFile(summaryFile)
	if err == nil {
		err = json.Unmarshal(raw, &sum)
	}
	if err != nil || sum.Unique != 300 || sum.Records != 330 {
		t.Fatalf("produce summary %+v, %v", sum, err)
	}

	run := itest.Start(t, "run", bin, runArgs(scram, redisTLS)...)
	run.WaitLine(ctx, "progress", func(m map[string]any) bool {
		return itest.Num(m, "lag") == 0 && m["lag_err"] == nil && itest.Num(m, "applied") > 0
	})
	run.Signal(syscall.SIGTERM)
	s := run.WaitLine(ctx, "summary", func(map[string]any) bool { return true })
	code = run.Wait(ctx)
	outputs = append(outputs, run.Output())
	if code != 0 {
		t.Fatalf("run: exit %d\n%s", code, run.Output())
	}
	if itest.Num(s, "applied") != int64(sum.Unique) || itest.Num(s, "suppressed") != int64(sum.Records-sum.Unique) {
		t.Fatalf("run applied %d suppressed %d, want %d and %d", itest.Num(s, "applied"), itest.Num(s, "suppressed"), sum.Unique, sum.Records-sum.Unique)
	}
	got, err := rs.C.HGetAll(ctx, prefix+"totals").Result()
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(sum.Totals) {
		t.Fatalf("totals hash has %d customers, produce's summary %d", len(got), len(sum.Totals))
	}
	for c, v := range sum.Totals {
		if got[c] != strconv.FormatInt(v, 10) {
			t.Fatalf("totals[%s] = %s, want %d", c, got[c], v)
		}
	}
	if n := itest.CountRedisKeys(ctx, t, rs.C, prefix+"ledger:*"); n != sum.Unique {
		t.Fatalf("ledger holds %d keys, want %d", n, sum.Unique)
	}

	status := exec.CommandContext(ctx, bin, append([]string{"status", "--group", group, "--topic", topic, "--json"}, scram...)...)
	status.Env = itest.WithoutShardpipeEnv()
	out, err := status.CombinedOutput()
	outputs = append(outputs, string(out))
	var st itest.StatusOut
	if err != nil || json.Unmarshal(out, &st) != nil || st.Lag != 0 {
		t.Fatalf("status: %v, lag %d\n%s", err, st.Lag, out)
	}

	testLeastPrivilege(ctx, t, k, bin, topic, group, redisTLS, prefix, &outputs)
	t.Run("bench", func(t *testing.T) { testBenchSecured(ctx, t, k, bin, &outputs) })

	other, err := testcerts.NewCA(dir, "other-ca")
	if err != nil {
		t.Fatal(err)
	}
	noGroup := integration.Group(t)
	failures := []struct {
		name  string
		kafka []string
		rds   []string
		extra []string
		want  []string
	}{
		{"kafka wrong password", append(append([]string{}, kafkaTLS...), "--kafka-sasl-mechanism", "SCRAM-SHA-512", "--kafka-sasl-user", itest.ScramUser,
			"--kafka-sasl-password-file", wrongFile), redisTLS, nil, []string{"authentication failed", "--kafka-sasl-password-file"}},
		{"kafka mechanism not enabled", append(append([]string{}, kafkaTLS...), "--kafka-sasl-mechanism", "AWS_MSK_IAM"), redisTLS, nil,
			[]string{"SASL mechanism failed", "does not enable"}},
		{"kafka unknown authority", append([]string{"--brokers", k.Sasl, "--kafka-tls-ca", other.CertFile}, scram[4:]...), redisTLS, nil,
			[]string{"TLS handshake failed (unknown authority)", "--kafka-tls-ca"}},
		{"kafka no group ACL", scram, redisTLS, []string{"--group", noGroup}, []string{"GROUP_AUTHORIZATION_FAILED"}},
		{"redis wrong password", scram, append(append([]string{}, redisTLS[:6]...), "--redis-password-file", wrongFile), nil,
			[]string{"redis", "authentication failed", "--redis-password-file"}},
		{"redis unknown authority", scram, append([]string{"--redis", "rediss://" + raddr, "--redis-tls-ca", other.CertFile}, redisTLS[4:]...), nil,
			[]string{"redis", "TLS handshake failed (unknown authority)", "--redis-tls-ca"}},
		{"redis NOPERM", scram, redisTLS, []string{"--ledger-prefix", "elsewhere:"}, []string{"redis", "authorization failed", "NOPERM"}},
	}
	for _, f := range failures {
		t.Run(f.name, func(t *testing.T) {
			env := []string{"AWS_ACCESS_KEY_ID=AKIDEXAMPLE", "AWS_SECRET_ACCESS_KEY=aws-Secr3t"}
			p := itest.StartEnv(t, f.name, bin, env, runArgs(f.kafka, f.rds, f.extra...)...)
			code := p.Wait(ctx)
			out := p.Output()
			outputs = append(outputs, out)
			if code != 3 {
				t.Fatalf("exit %d, want 3\n%s", code, out)
			}
			for _, w := range f.want {
				if !strings.Contains(out, w) {
					t.Fatalf("output lacks %q:\n%s", w, out)
				}
			}
			if strings.Contains(out, "aws-Secr3t") {
				t.Fatalf("the AWS secret key is in the output:\n%s", out)
			}
			t.Logf("%s", lastLines(out, 2))
		})
	}
}

func anys(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
