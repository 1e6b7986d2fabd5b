package main

import (
	"log/slog"
	"strings"

	"github.com/shardpipe/shardpipe/cmd/shardpipe/internal/flagcheck"
)

// warnWeakSecurity logs one warning for each setting that works but
// weakens security: a SASL mechanism that sends its password or token in
// cleartext without TLS, a Redis TLS connection whose certificate is not
// verified (skip_verify=true in the URL).
func warnWeakSecurity(log *slog.Logger, k kafkaConn, r flagcheck.RedisTarget) {
	if secret := k.sec.Cleartext(); secret != "" {
		mech := strings.ToUpper(strings.TrimSpace(k.sec.SASLMechanism))
		log.Warn("SASL "+mech+" without TLS: the Kafka "+secret+" crosses the network in cleartext",
			"setting", flagRef("kafka-sasl-mechanism"), "fix", "turn on "+flagRef("kafka-tls"))
	}
	if cfg := r.TLSConfig(); cfg != nil && cfg.InsecureSkipVerify {
		log.Warn("Redis TLS without certificate verification: whoever is on the path can pose as Redis and read the password and every ledger write",
			"setting", flagRef(fRedis)+" skip_verify=true", "fix", "drop skip_verify; trust the server's CA with "+flagRef("redis-tls-ca"))
	}
}
