package itest

import (
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/plain"

	"github.com/shardpipe/shardpipe/integration"
	"github.com/shardpipe/shardpipe/internal/harness/testcerts"
)

// TlsKafka is a broker of one test with TLS listeners and an authorizer
// (StandardAuthorizer, User:admin the only super user):
//
//   - sasl: SASL_SSL with PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 and
//     OAUTHBEARER (unsecured JWTs, the broker's default validator);
//   - mtls: SSL with client certificates required (principal User:CN=...);
//   - expired: SSL whose certificate expired an hour ago;
//   - broker: SASL_PLAINTEXT PLAIN, for the broker itself and the admin;
//   - a PLAINTEXT listener (User:ANONYMOUS, no ACLs) the services script
//     waits on.
//
// Its certificate is for 127.0.0.1 and localhost, signed by ca.
type TlsKafka struct {
	Sasl, Mtls, Broker string
	Expired            string // SSL with an expired certificate
	Dir                string
	Ca                 *testcerts.CA
	Admin              *kadm.Client
	AdminCl            *kgo.Client
}

// The users of tlsKafka: PLAIN's users are in its JAAS, SCRAM's are made
// with AlterUserSCRAMs once it runs.
const (
	PlainUser, PlainPass = "alice", "alice-plain-Secr3t"
	ScramUser, ScramPass = "bob", "bob-scram-Secr3t"
)

// StartTLSKafka starts the broker with scripts/services.sh from the jars it
// fetched, as startSecuredKafka does, and creates the SCRAM users.
func StartTLSKafka(t *testing.T) *TlsKafka {
	t.Helper()
	jars, _ := filepath.Glob(filepath.Join(RepoRoot(t), ".cache", "kafka-*", ".complete"))
	_, jerr := exec.LookPath("java")
	if len(jars) == 0 || jerr != nil {
		msg := "a broker of this test's own needs java and the Kafka jars: run 'scripts/services.sh fetch kafka' (make test does)"
		if integration.Required() {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	dir := t.TempDir()
	ca, err := testcerts.NewCA(dir, "test-ca")
	if err != nil {
		t.Fatal(err)
	}
	srv, err := ca.Issue(testcerts.Spec{Name: "broker", Hosts: []string{"127.0.0.1", "localhost"}})
	if err != nil {
		t.Fatal(err)
	}
	old, err := ca.Issue(testcerts.Spec{Name: "expired", Hosts: []string{"127.0.0.1", "localhost"}, Expired: true})
	if err != nil {
		t.Fatal(err)
	}
	taken := map[int]bool{}
	port, cport, bport, mport := FreeLowPort(t, taken), FreeLowPort(t, taken), FreeLowPort(t, taken), FreeLowPort(t, taken)
	eport, pport := FreeLowPort(t, taken), FreeLowPort(t, taken)
	adminJAAS := `org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="admin-secret" user_admin="admin-secret";`
	extra := fmt.Sprintf(`listeners=PLAINTEXT://127.0.0.1:%[12]d,SASL://127.0.0.1:%[1]d,BROKER://127.0.0.1:%[3]d,CONTROLLER://127.0.0.1:%[2]d,MTLS://127.0.0.1:%[4]d,EXPIRED://127.0.0.1:%[10]d
advertised.listeners=PLAINTEXT://127.0.0.1:%[12]d,SASL://127.0.0.1:%[1]d,BROKER://127.0.0.1:%[3]d,MTLS://127.0.0.1:%[4]d,EXPIRED://127.0.0.1:%[10]d
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,SASL:SASL_SSL,MTLS:SSL,EXPIRED:SSL,BROKER:SASL_PLAINTEXT,CONTROLLER:SASL_PLAINTEXT
inter.broker.listener.name=BROKER
sasl.enabled.mechanisms=PLAIN
sasl.mechanism.inter.broker.protocol=PLAIN
sasl.mechanism.controller.protocol=PLAIN
listener.name.broker.plain.sasl.jaas.config=%[5]s
listener.name.controller.plain.sasl.jaas.config=%[5]s
listener.name.sasl.sasl.enabled.mechanisms=PLAIN,SCRAM-SHA-256,SCRAM-SHA-512,OAUTHBEARER
listener.name.sasl.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required user_%[8]s="%[9]s";
listener.name.sasl.scram-sha-256.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;
listener.name.sasl.scram-sha-512.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;
listener.name.sasl.oauthbearer.sasl.jaas.config=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required unsecuredLoginStringClaim_sub="admin";
ssl.keystore.type=PEM
ssl.keystore.location=%[6]s
ssl.truststore.type=PEM
ssl.truststore.location=%[7]s
listener.name.mtls.ssl.client.auth=required
listener.name.expired.ssl.keystore.type=PEM
listener.name.expired.ssl.keystore.location=%[11]s
authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer
super.users=User:admin
`, port, cport, bport, mport, adminJAAS, srv.BothFile, ca.CertFile, PlainUser, PlainPass, eport, old.BothFile, pport)
	extraFile := filepath.Join(dir, "tls.properties")
	if err := os.WriteFile(extraFile, []byte(extra), 0o600); err != nil {
		t.Fatal(err)
	}
	services := func(args ...string) ([]byte, error) {
		cmd := exec.Command(filepath.Join(RepoRoot(t), "scripts", "services.sh"), args...)
		cmd.Env = append(WithoutShardpipeEnv(), "SHARDPIPE_SERVICES_DIR="+filepath.Join(dir, "services"),
			"SHARDPIPE_KAFKA_PORT="+strconv.Itoa(pport), "SHARDPIPE_KAFKA_CONTROLLER_PORT="+strconv.Itoa(cport),
			"SHARDPIPE_KAFKA_EXTRA_CONFIG="+extraFile, "SHARDPIPE_READY_TIMEOUT=120s")
		return cmd.CombinedOutput()
	}
	t.Cleanup(func() {
		if out, err := services("stop", "kafka"); err != nil {
			t.Errorf("stop the TLS broker: %v\n%s", err, out)
		}
	})
	if out, err := services("start", "kafka"); err != nil {
		log, _ := os.ReadFile(filepath.Join(dir, "services", "kafka", "logs", "server.log"))
		if len(log) > 6000 {
			log = log[len(log)-6000:]
		}
		t.Fatalf("start the TLS broker: %v\n%s\n%s", err, out, log)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers("127.0.0.1:"+strconv.Itoa(bport)),
		kgo.SASL(plain.Auth{User: "admin", Pass: "admin-secret"}.AsMechanism()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	k := &TlsKafka{Sasl: "127.0.0.1:" + strconv.Itoa(port), Mtls: "127.0.0.1:" + strconv.Itoa(mport),
		Broker: "127.0.0.1:" + strconv.Itoa(bport), Expired: "127.0.0.1:" + strconv.Itoa(eport), Dir: dir, Ca: ca, Admin: kadm.NewClient(cl), AdminCl: cl}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	// One request per mechanism: a request naming a user twice is refused.
	for _, m := range []kadm.ScramMechanism{kadm.ScramSha256, kadm.ScramSha512} {
		res, err := k.Admin.AlterUserSCRAMs(ctx, nil, []kadm.UpsertSCRAM{{User: ScramUser, Mechanism: m, Iterations: 4096, Password: ScramPass}})
		if err == nil {
			err = res.Error()
		}
		if err != nil {
			t.Fatalf("create the SCRAM user (%v): %v", m, err)
		}
	}
	return k
}

// Allow grants principal ops on the ACL builder's resources.
func (k *TlsKafka) Allow(ctx context.Context, t *testing.T, principal string, b *kadm.ACLBuilder, ops ...kadm.ACLOperation) {
	t.Helper()
	res, err := k.Admin.CreateACLs(ctx, b.Allow(principal).AllowHosts("*").Operations(ops...).ResourcePatternType(kadm.ACLPatternLiteral))
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

// UnsecuredJWT is an OAUTHBEARER token the broker's default (unsecured)
// validator accepts: alg none, subject sub, valid for ttl.
func UnsecuredJWT(sub string, ttl time.Duration) string {
	enc := base64.RawURLEncoding.EncodeToString
	now := time.Now()
	return enc([]byte(`{"alg":"none"}`)) + "." +
		enc(fmt.Appendf(nil, `{"sub":%q,"iat":%d,"exp":%d}`, sub, now.Unix(), now.Add(ttl).Unix())) + "."
}
