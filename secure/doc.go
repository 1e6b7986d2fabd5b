// Package secure holds the settings that reach a secured Kafka or Redis:
// TLS (a CA file or the system roots, a client certificate for mutual TLS,
// a server name), Kafka SASL (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512,
// OAUTHBEARER, AWS_MSK_IAM through franz-go's pkg/sasl) and a Redis ACL user
// and password. It turns them into kgo options and go-redis options, and
// names the step a failed connection stopped at (TCP connect, TLS
// handshake, SASL mechanism, authentication, authorization) with Diagnose.
//
// Secrets (passwords, tokens, keys) are read from files or environment
// variables into a Secret, which never prints its value: not through
// fmt, slog, JSON, nor in the errors of this package. A URL is printed
// through RedactURL (no password, no query value; nothing of one that does
// not parse), and an error naming one through RedactError.
//
// It imports no shardpipe package; the command, admin and the test kit
// share it.
package secure
