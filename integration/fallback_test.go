package integration_test

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/shardpipe/shardpipe/integration"
	"github.com/shardpipe/shardpipe/integration/embedded"
	"github.com/shardpipe/shardpipe/integration/scenario"
)

// stopped records how a test helper ended a test (Fatal or Skip) without
// ending the real test.
type stopped struct {
	testing.TB
	how string
}

func (s *stopped) Fatalf(format string, args ...any) {
	s.how = "fatal: " + fmt.Sprintf(format, args...)
	runtime.Goexit()
}

func (s *stopped) Skip(args ...any) {
	s.how = "skip: " + fmt.Sprint(args...)
	runtime.Goexit()
}

// call runs fn with a recorder in its own goroutine, as the testing package
// runs a test, and says how it ended ("" when it returned).
func call(t *testing.T, fn func(tb testing.TB)) string {
	s := &stopped{TB: t}
	done := make(chan struct{})
	go func() { defer close(done); fn(s) }()
	<-done
	return s.how
}

// TestEmbeddedFallback: without endpoints and without Docker, Kafka and
// Redis skip (or fail under SHARDPIPE_REQUIRE_INTEGRATION=1) unless the test
// opted in to the embedded stand-ins, which then run a whole scenario.
// Not parallel: it clears the environment the other tests use.
func TestEmbeddedFallback(t *testing.T) {
	t.Setenv(integration.EnvKafkaBrokers, "")
	t.Setenv(integration.EnvRedisAddr, "")
	if how := call(t, func(tb testing.TB) { integration.Kafka(tb) }); how == "" {
		t.Skip("a Docker engine answers here; the fallback is not reached")
	}
	for _, tc := range []struct {
		require string
		fn      func(tb testing.TB)
		want    string
	}{
		{"", func(tb testing.TB) { integration.Kafka(tb) }, "skip: integration test needs a real Kafka"},
		{"1", func(tb testing.TB) { integration.Redis(tb) }, "fatal: integration test needs a real Redis"},
		{"1", func(tb testing.TB) { integration.Kafka(tb, integration.OrEmbedded(embedded.Servers{})) },
			"fatal: integration test needs a real Kafka"},
		{"", func(tb testing.TB) { integration.Kafka(tb, integration.OrEmbedded(embedded.Servers{})) }, ""},
	} {
		t.Setenv(integration.EnvRequire, tc.require)
		if how := call(t, tc.fn); !strings.HasPrefix(how, tc.want) || (tc.want == "" && how != "") {
			t.Errorf("require=%q: ended with %q, want %q", tc.require, how, tc.want)
		}
	}

	t.Setenv(integration.EnvRequire, "")
	fb := integration.OrEmbedded(embedded.Servers{})
	s := scenario.Setup{Brokers: integration.Kafka(t, fb), Redis: integration.Redis(t, fb)}
	r := integration.CrashBeforeCommit(t.Context(), t, s, scenario.CrashConfig{})
	integration.RequireExactlyOnce(t, r)
	if r.Crash.Replayed != 7 {
		t.Errorf("on the embedded servers the seed's crash replayed %d, want 7", r.Crash.Replayed)
	}
}
