package secure_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl"

	"github.com/shardpipe/shardpipe/internal/harness/testcerts"
	"github.com/shardpipe/shardpipe/secure"
)

const pw = "hunter2-Secr3t"

// TestSecretNeverPrints: fmt (every verb, nested in a struct), slog (text
// and JSON) and encoding/json print "[redacted]", never the value; Value
// returns it.
func TestSecretNeverPrints(t *testing.T) {
	s := secure.NewSecret(pw, "test")
	holder := struct {
		User string
		Pass secure.Secret
	}{"u", s}
	var out []string
	for _, verb := range []string{"%v", "%s", "%+v", "%#v", "%q", "%x", "%d"} {
		out = append(out, fmt.Sprintf(verb, s), fmt.Sprintf(verb, holder), fmt.Sprintf(verb, &holder))
	}
	var buf bytes.Buffer
	slog.New(slog.NewJSONHandler(&buf, nil)).Info("x", "pass", s, "holder", holder)
	slog.New(slog.NewTextHandler(&buf, nil)).Info("x", "pass", s, "holder", holder)
	out = append(out, buf.String())
	b, err := json.Marshal(holder)
	if err != nil {
		t.Fatal(err)
	}
	out = append(out, string(b))
	for _, o := range out {
		if strings.Contains(o, pw) || strings.Contains(o, fmt.Sprintf("%x", pw)) {
			t.Fatalf("the secret printed: %s", o)
		}
	}
	if !strings.Contains(fmt.Sprint(s), "[redacted]") || s.Value() != pw {
		t.Fatalf("String %q, Value %q", s, s.Value())
	}
}

// TestSettingsErrors: each bad setting is refused with the sentinel that
// names it, and no error text holds a secret or a key.
func TestSettingsErrors(t *testing.T) {
	dir := t.TempDir()
	ca, err := testcerts.NewCA(dir, "ca")
	if err != nil {
		t.Fatal(err)
	}
	pair, err := ca.Issue(testcerts.Spec{Name: "client", Client: true})
	if err != nil {
		t.Fatal(err)
	}
	other, err := ca.Issue(testcerts.Spec{Name: "other", Client: true})
	if err != nil {
		t.Fatal(err)
	}
	notPEM := filepath.Join(dir, "not.pem")
	if err := os.WriteFile(notPEM, []byte("not a certificate "+pw), 0o600); err != nil {
		t.Fatal(err)
	}
	key, _ := os.ReadFile(pair.KeyFile)
	missing := filepath.Join(dir, "missing.pem")
	p := secure.NewSecret(pw, "test")
	tests := []struct {
		name string
		k    secure.Kafka
		want error
	}{
		{"CA file missing", secure.Kafka{TLS: secure.TLS{CAFile: missing}}, secure.ErrCAFile},
		{"CA file not PEM", secure.Kafka{TLS: secure.TLS{CAFile: notPEM}}, secure.ErrCAFile},
		{"certificate missing", secure.Kafka{TLS: secure.TLS{CertFile: missing, KeyFile: pair.KeyFile}}, secure.ErrCertFile},
		{"key not PEM", secure.Kafka{TLS: secure.TLS{CertFile: pair.CertFile, KeyFile: notPEM}}, secure.ErrCertFile},
		{"key of another certificate", secure.Kafka{TLS: secure.TLS{CertFile: pair.CertFile, KeyFile: other.KeyFile}}, secure.ErrCertFile},
		{"certificate without key", secure.Kafka{TLS: secure.TLS{CertFile: pair.CertFile}}, secure.ErrSettings},
		{"unknown mechanism", secure.Kafka{SASL: secure.SASL{Mechanism: "GSSAPI", User: "u", Password: p}}, secure.ErrSettings},
		{"SCRAM without password", secure.Kafka{SASL: secure.SASL{Mechanism: "SCRAM-SHA-256", User: "u"}}, secure.ErrSettings},
		{"password without mechanism", secure.Kafka{SASL: secure.SASL{User: "u", Password: p}}, secure.ErrSettings},
		{"OAUTHBEARER without token", secure.Kafka{SASL: secure.SASL{Mechanism: "OAUTHBEARER"}}, secure.ErrSettings},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tt.k.Opts()
			if !errors.Is(err, tt.want) {
				t.Fatalf("Opts: %v, want %v", err, tt.want)
			}
			if strings.Contains(err.Error(), pw) || strings.Contains(err.Error(), string(key)) {
				t.Fatalf("the error holds a secret: %v", err)
			}
			t.Log(err)
		})
	}
	if _, err := secure.SecretFromFile("password file", missing); !errors.Is(err, secure.ErrSecretFile) {
		t.Fatalf("SecretFromFile(missing): %v", err)
	}
	empty := filepath.Join(dir, "empty")
	_ = os.WriteFile(empty, []byte("\n"), 0o600)
	if _, err := secure.SecretFromFile("password file", empty); !errors.Is(err, secure.ErrSecretFile) {
		t.Fatalf("SecretFromFile(empty): %v", err)
	}
	if err := (secure.Redis{TLS: secure.TLS{CAFile: notPEM}}).ApplyOptions(&redis.Options{}); !errors.Is(err, secure.ErrCAFile) {
		t.Fatalf("Redis with a bad CA: %v", err)
	}
}

// TestTokenReadAtEachAuthentication: the OAUTHBEARER token file is read
// again at each authentication, so a token refreshed in place is sent; a
// token command that fails is ErrToken without its output.
func TestTokenReadAtEachAuthentication(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "token")
	mech := func(s secure.SASL) kgo.Opt {
		opts, err := secure.Kafka{SASL: s}.Opts()
		if err != nil || len(opts) != 1 {
			t.Fatalf("Opts: %v, %d options", err, len(opts))
		}
		return opts[0]
	}
	cl, err := kgo.NewClient(mech(secure.SASL{Mechanism: "OAUTHBEARER", TokenFile: file}))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	m := cl.OptValue(kgo.SASL).([]sasl.Mechanism)[0]
	for _, tok := range []string{"token-one", "token-two"} {
		if err := os.WriteFile(file, []byte(tok+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		_, first, err := m.Authenticate(context.Background(), "127.0.0.1:9092")
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(first), "Bearer "+tok) {
			t.Fatalf("authentication sent %q, want the token %s", first, tok)
		}
	}
	_ = os.Remove(file)
	if _, _, err := m.Authenticate(context.Background(), "h"); !errors.Is(err, secure.ErrToken) {
		t.Fatalf("token file gone: %v, want ErrToken", err)
	}
	cl2, err := kgo.NewClient(mech(secure.SASL{Mechanism: "OAUTHBEARER", TokenCommand: []string{"sh", "-c", "echo " + pw + "; exit 3"}}))
	if err != nil {
		t.Fatal(err)
	}
	defer cl2.Close()
	_, _, err = cl2.OptValue(kgo.SASL).([]sasl.Mechanism)[0].Authenticate(context.Background(), "h")
	if !errors.Is(err, secure.ErrToken) || strings.Contains(err.Error(), pw) {
		t.Fatalf("failing token command: %v", err)
	}
}

// TestDiagnoseReplies: Redis and Kafka refusals map to their steps.
func TestDiagnoseReplies(t *testing.T) {
	tests := []struct {
		err  error
		step secure.Step
	}{
		{errors.New("WRONGPASS invalid username-password pair or user is disabled."), secure.StepAuthentication},
		{errors.New("NOAUTH Authentication required."), secure.StepAuthentication},
		{errors.New("NOPERM this user has no permissions to run the 'hincrby' command"), secure.StepAuthorization},
		{fmt.Errorf("join: %w", kerr.GroupAuthorizationFailed), secure.StepAuthorization},
		{kerr.UnsupportedSaslMechanism, secure.StepMechanism},
		{kerr.SaslAuthenticationFailed, secure.StepAuthentication},
	}
	for _, tt := range tests {
		if d := secure.Diagnose(tt.err); d == nil || d.Step != tt.step {
			t.Errorf("Diagnose(%v) = %v, want %s", tt.err, d, tt.step)
		}
	}
	if d := secure.Diagnose(errors.New("some other failure")); d != nil {
		t.Errorf("Diagnose(other) = %v, want nil", d)
	}
}

// TestValuesNameTheSetting: each bad plain value is a *secure.SettingError naming
// the setting a command maps to its flag, and holds no secret.
func TestValuesNameTheSetting(t *testing.T) {
	dir := t.TempDir()
	notPEM := filepath.Join(dir, "x.pem")
	if err := os.WriteFile(notPEM, []byte("pw-Secr3t"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("SP_TEST_PW", "pw-Secr3t")
	kafka := []struct {
		v       secure.KafkaValues
		setting string
	}{
		{secure.KafkaValues{TLSCA: notPEM}, "tls-ca"},
		{secure.KafkaValues{TLSCert: notPEM}, "tls-cert"},
		{secure.KafkaValues{TLSKey: notPEM}, "tls-key"},
		{secure.KafkaValues{SASLMechanism: "GSSAPI", SASLUser: "u"}, "sasl-mechanism"},
		{secure.KafkaValues{SASLMechanism: "PLAIN", PasswordEnv: "SP_TEST_PW"}, "sasl-user"},
		{secure.KafkaValues{SASLMechanism: "PLAIN", SASLUser: "u", SASLPasswordFile: filepath.Join(dir, "none")}, "sasl-password-file"},
	}
	for _, tt := range kafka {
		_, err := tt.v.Opts()
		var se *secure.SettingError
		if !errors.As(err, &se) || se.Setting != tt.setting || strings.Contains(err.Error(), "pw-Secr3t") {
			t.Errorf("%+v: %v, want a *secure.SettingError of %s without the secret", tt.v, err, tt.setting)
		}
	}
	if opts, err := (secure.KafkaValues{PasswordEnv: "SP_TEST_PW"}).Opts(); err != nil || len(opts) != 0 {
		t.Errorf("the password variable alone: %v, %d options; want no error and none", err, len(opts))
	}
	_, err := secure.RedisValues{TLSCA: notPEM}.Redis()
	var se *secure.SettingError
	if !errors.As(err, &se) || se.Setting != "tls-ca" {
		t.Errorf("redis CA not PEM: %v, want a *secure.SettingError of tls-ca", err)
	}
	if r, err := (secure.RedisValues{User: "u", PasswordEnv: "SP_TEST_PW"}).Redis(); err != nil || r.Password.Value() != "pw-Secr3t" {
		t.Errorf("redis password from the variable: %v", err)
	}
}
