package secure_test

import (
	"context"
	"os/exec"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl"

	"github.com/shardpipe/shardpipe/secure"
)

// TestTokenCommandEnvironment: the OAUTHBEARER token command runs with a
// clean environment: the basics a program needs to run (PATH, HOME, the
// user, the locale, TMPDIR, TZ) and nothing else, no SHARDPIPE_* variable
// (the passwords) and no other secret of the parent.
func TestTokenCommandEnvironment(t *testing.T) {
	envCmd, err := exec.LookPath("env")
	if err != nil {
		t.Skip("no env program to print the environment")
	}
	tests := []struct {
		name, value string
		kept        bool
	}{
		{"HOME", "/home/token", true},
		{"USER", "svc", true},
		{"LANG", "C.UTF-8", true},
		{"LC_ALL", "C", true},
		{"TMPDIR", "/tmp/token", true},
		{"TZ", "UTC", true},
		{"SSL_CERT_FILE", "/etc/token-ca.pem", true},
		{"SHARDPIPE_KAFKA_SASL_PASSWORD", "kafka-Secr3t", false},
		{"SHARDPIPE_REDIS_PASSWORD", "redis-Secr3t", false},
		{"SHARDPIPE_BROKERS", "b:9092", false},
		{"OTEL_EXPORTER_OTLP_HEADERS", "api-key=otel-Secr3t", false},
		{"AWS_SECRET_ACCESS_KEY", "aws-Secr3t", false},
	}
	for _, tt := range tests {
		t.Setenv(tt.name, tt.value)
	}
	opts, err := secure.Kafka{SASL: secure.SASL{Mechanism: "OAUTHBEARER", TokenCommand: []string{envCmd}}}.Opts()
	if err != nil {
		t.Fatal(err)
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	_, first, err := cl.OptValue(kgo.SASL).([]sasl.Mechanism)[0].Authenticate(context.Background(), "h")
	if err != nil {
		t.Fatal(err)
	}
	env := "\n" + string(first) + "\n" // the token is the command's output: its environment
	if !strings.Contains(env, "\nPATH=") && !strings.Contains(env, "Bearer PATH=") {
		t.Errorf("the token command got no PATH")
	}
	for _, tt := range tests {
		if got := strings.Contains(env, tt.name+"="+tt.value); got != tt.kept {
			t.Errorf("%s passed to the token command: %v, want %v", tt.name, got, tt.kept)
		}
	}
	for _, l := range strings.Split(env, "\n") {
		if strings.Contains(l, "SHARDPIPE_") {
			name, _, _ := strings.Cut(l, "=")
			t.Errorf("the token command got %s", name)
		}
	}
}
