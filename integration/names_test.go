package integration

import (
	"regexp"
	"strings"
	"testing"
)

func TestNamesAreUniqueAndValid(t *testing.T) {
	valid := regexp.MustCompile(`^[a-zA-Z0-9._-]{1,249}$`) // Kafka topic and group names
	seen := map[string]bool{}
	for range 100 {
		for _, n := range []string{Topic(t), Group(t)} {
			if !valid.MatchString(n) {
				t.Fatalf("invalid Kafka name %q", n)
			}
			if seen[n] {
				t.Fatalf("name %q repeated", n)
			}
			seen[n] = true
		}
		p := KeyPrefix(t)
		if !strings.HasPrefix(p, "sp:test:") || !strings.HasSuffix(p, ":") || strings.ContainsAny(p, "*?[]\\ ") {
			t.Fatalf("bad key prefix %q", p)
		}
		if seen[p] {
			t.Fatalf("prefix %q repeated", p)
		}
		seen[p] = true
	}
	t.Run("Sub/Test With Spaces and ÜNICODE", func(t *testing.T) {
		if n := Topic(t); !valid.MatchString(n) || !strings.Contains(n, "sub-test-with-spaces-and") {
			t.Fatalf("topic %q", n)
		}
	})
}
