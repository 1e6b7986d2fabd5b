package main

import (
	"strings"
	"testing"
)

// TestWeakSecurityWarnings: run warns at start, once each, about a setting
// that works but weakens security (a Kafka password or token sent in
// cleartext, a Redis certificate not verified), and not about the same
// setting made safe.
func TestWeakSecurityWarnings(t *testing.T) {
	const (
		plain = "SASL PLAIN without TLS"
		oauth = "SASL OAUTHBEARER without TLS"
		skip  = "Redis TLS without certificate verification"
	)
	tests := []struct {
		name string
		args []string
		want []string // warnings, in order
	}{
		{"plain in the clear", []string{"--kafka-sasl-mechanism=plain", "--kafka-sasl-user=u"}, []string{plain}},
		{"plain over TLS", []string{"--kafka-sasl-mechanism=PLAIN", "--kafka-sasl-user=u", "--kafka-tls"}, nil},
		{"scram in the clear", []string{"--kafka-sasl-mechanism=SCRAM-SHA-512", "--kafka-sasl-user=u"}, nil},
		{"oauthbearer in the clear", []string{"--kafka-sasl-mechanism=OAUTHBEARER", "--kafka-sasl-token-command=true"}, []string{oauth}},
		{"redis skip_verify", []string{"--redis=rediss://127.0.0.1:1/0?skip_verify=true"}, []string{skip}},
		{"redis sentinel skip_verify", []string{"--redis=rediss://127.0.0.1:1/0?master_name=m&skip_verify=true"}, []string{skip}},
		{"redis verified", []string{"--redis=rediss://127.0.0.1:1/0"}, nil},
		{"both", []string{"--kafka-sasl-mechanism=PLAIN", "--kafka-sasl-user=u", "--redis=rediss://127.0.0.1:1/0?skip_verify=true"}, []string{plain, skip}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"run", "--topic=orders", "--brokers=127.0.0.1:1", "--redis=127.0.0.1:1", "--connect-timeout=100ms"}, tt.args...)
			code, _, stderr := call(t, map[string]string{"SHARDPIPE_KAFKA_SASL_PASSWORD": "pw"}, args...)
			if code != exitUnavailable {
				t.Fatalf("exit %d, want %d (nothing listens): %s", code, exitUnavailable, stderr)
			}
			var got []string
			for _, l := range strings.Split(stderr, "\n") {
				if strings.Contains(l, "level=WARN") {
					msg, _, _ := strings.Cut(strings.TrimPrefix(l[strings.Index(l, "msg=")+len("msg="):], `"`), ":")
					got = append(got, msg)
				}
			}
			if strings.Join(got, "|") != strings.Join(tt.want, "|") {
				t.Errorf("warnings %q, want %q\n%s", got, tt.want, stderr)
			}
		})
	}
}
