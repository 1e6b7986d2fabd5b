package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSecurityFlagsRejectBadSettings: every command that connects refuses
// a bad security setting with exit 2 and one line naming the flag (or the
// setting), before anything connects, and no line, nor --help, holds the
// password given in the environment or a file.
func TestSecurityFlagsRejectBadSettings(t *testing.T) {
	const pw = "env-Secr3t-value"
	dir := t.TempDir()
	notPEM := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(notPEM, []byte(pw), 0o600); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing")
	env := map[string]string{"SHARDPIPE_KAFKA_SASL_PASSWORD": pw, "SHARDPIPE_REDIS_PASSWORD": pw}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"kafka CA not PEM", []string{"--kafka-tls-ca", notPEM}, "--kafka-tls-ca (SHARDPIPE_KAFKA_TLS_CA): CA file " + notPEM + ": no PEM certificate"},
		{"kafka cert without key", []string{"--kafka-tls-cert", notPEM}, "given without its key"},
		{"kafka unknown mechanism", []string{"--kafka-sasl-mechanism", "GSSAPI", "--kafka-sasl-user", "u"}, `unknown SASL mechanism "GSSAPI"`},
		{"kafka SCRAM without user", []string{"--kafka-sasl-mechanism", "SCRAM-SHA-256"}, "SASL SCRAM-SHA-256 needs a user and a password"},
		{"kafka password file missing", []string{"--kafka-sasl-mechanism", "PLAIN", "--kafka-sasl-user", "u", "--kafka-sasl-password-file", missing},
			"--kafka-sasl-password-file (SHARDPIPE_KAFKA_SASL_PASSWORD_FILE): Kafka SASL password file " + missing},
		{"redis CA not PEM", []string{"--redis-tls-ca", notPEM}, "--redis-tls-ca (SHARDPIPE_REDIS_TLS_CA): CA file"},
		{"redis password file missing", []string{"--redis-password-file", missing}, "--redis-password-file (SHARDPIPE_REDIS_PASSWORD_FILE): Redis password file"},
	}
	base := map[string][]string{
		"run":           {"run", "--topic", "o"},
		"replay":        {"replay", "--topic", "o", "--id", "x", "--from", "0"},
		"reset-offsets": {"reset-offsets", "--topic", "o", "--to", "earliest"},
		"status":        {"status"},
		"produce":       {"produce", "--topic", "o"},
	}
	for _, tt := range tests {
		for name, args := range base {
			if strings.HasPrefix(tt.name, "redis") && (name == "status" || name == "produce") {
				continue // they do not connect to Redis
			}
			t.Run(tt.name+"/"+name, func(t *testing.T) {
				code, stdout, stderr := call(t, env, append(append(append([]string{}, args...), "--brokers", "127.0.0.1:1"), tt.args...)...)
				if code != exitUsage {
					t.Fatalf("exit %d, want %d: %s", code, exitUsage, stderr)
				}
				if lines := problemLines(stderr); len(lines) != 1 || !strings.Contains(lines[0], tt.want) {
					t.Fatalf("stderr lines %q, want one containing %q", lines, tt.want)
				}
				if strings.Contains(stdout+stderr, pw) {
					t.Fatalf("the password is in the output: %s%s", stdout, stderr)
				}
			})
		}
	}
	for name := range base {
		_, stdout, stderr := call(t, env, name, "--help")
		if !strings.Contains(stdout, "--kafka-sasl-password-file") || strings.Contains(stdout+stderr, pw) {
			t.Fatalf("%s --help: lacks the security flags, or holds the password:\n%s", name, stdout)
		}
	}
}
