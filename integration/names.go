package integration

import (
	"crypto/rand"
	"encoding/hex"
	"strings"
	"testing"
)

// Topic returns a topic name unique to this test and this run.
func Topic(t testing.TB) string { return uniqueName(t, "sp-topic-", "-") }

// Group returns a consumer group ID unique to this test and this run.
func Group(t testing.TB) string { return uniqueName(t, "sp-group-", "-") }

// KeyPrefix returns a Redis key prefix unique to this test and this run,
// ending in ':'. See RedisPrefix for one whose keys are deleted afterwards.
func KeyPrefix(t testing.TB) string { return uniqueName(t, "sp:test:", ":") + ":" }

// uniqueName joins prefix, a sanitized form of the test name and a random
// suffix; only [a-z0-9-] is kept from the test name, which is valid in Kafka
// topic and group names and in Redis keys.
func uniqueName(t testing.TB, prefix, sep string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(t.Name()) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
		default:
			b.WriteByte('-')
		}
	}
	name := strings.Trim(b.String(), "-")
	if len(name) > 80 {
		name = name[:80]
	}
	var rnd [4]byte
	if _, err := rand.Read(rnd[:]); err != nil {
		t.Fatalf("integration: random suffix: %v", err)
	}
	return prefix + name + sep + hex.EncodeToString(rnd[:])
}
