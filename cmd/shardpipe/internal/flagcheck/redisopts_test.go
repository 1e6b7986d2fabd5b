package flagcheck

import (
	"os"
	"strings"
	"testing"
)

// TestParseRedisOptionRanges: a URL option out of its range is refused,
// naming the option and its range but not the value, on each client that
// takes it (single, Sentinel, cluster); every problem is its own error; the
// ends of the ranges give a client, built and closed without a panic.
func TestParseRedisOptionRanges(t *testing.T) {
	tests := []struct {
		spec    string
		cluster bool
		want    []string // one per problem; none: accepted
	}{
		{"redis://h:1?pool_size=-5", false, []string{"option pool_size: want 0 to 10000 (0: go-redis's default)"}},
		{"redis://h:1?master_name=m&pool_size=-5", false, []string{"option pool_size: want 0 to 10000"}},
		{"redis://h:1?pool_size=-5", true, []string{"option pool_size: want 0 to 10000"}},
		{"redis://h:1?pool_size=100000000", false, []string{"option pool_size: want 0 to 10000"}},
		{"redis://h:1?min_idle_conns=-1&max_retries=-2&protocol=7", false, []string{
			"option max_retries: want -1 to 100", "option min_idle_conns: want 0 to 10000", "option protocol: want 2 to 3"}},
		{"redis://h:1?dial_timeout=9223372036854775807", false, []string{"option dial_timeout: want a duration (500ms, 5s) or a whole number of seconds, 1ms to 24h"}},
		{"redis://h:1?read_timeout=25h&pool_timeout=0", false, []string{"option pool_timeout: want 1ms to 24h", "option read_timeout: want 0s to 24h (0: none)"}},
		{"redis://h:1?db=99999999999999999999", false, []string{"option db: want a whole number, 0 to 2147483647"}},
		{"redis://h:1/2147483648", false, []string{"path: want /DB, DB a database number 0 to 2147483647"}},
		{"redis://h:1/3", true, []string{"Redis Cluster has database 0 only"}},
		{"redis://h:1/2147483647?pool_size=10000&min_idle_conns=0&protocol=2&max_retries=-1&read_timeout=0&dial_timeout=1ms", false, nil},
		{"redis://h:1?master_name=m&pool_size=10000&pipeline_pool_size=-1&dialer_retries=100", false, nil},
		{"redis://h:1?pool_size=10000&max_redirects=100&failing_timeout_seconds=3600&conn_max_lifetime=24h", true, nil},
	}
	for _, tt := range tests {
		rt, err := ParseRedis(tt.spec, tt.cluster)
		if tt.want == nil {
			if err != nil {
				t.Errorf("ParseRedis(%q, %v): %v, want a target", tt.spec, tt.cluster, err)
				continue
			}
			if err := rt.Client().Close(); err != nil {
				t.Errorf("%q: close: %v", tt.spec, err)
			}
			continue
		}
		var errs []error
		if j, ok := err.(interface{ Unwrap() []error }); ok {
			errs = j.Unwrap()
		} else if err != nil {
			errs = []error{err}
		}
		ok := len(errs) == len(tt.want)
		for i := 0; ok && i < len(errs); i++ {
			ok = strings.Contains(errs[i].Error(), tt.want[i])
		}
		if !ok {
			t.Errorf("ParseRedis(%q, %v): %v; want one error each containing %q", tt.spec, tt.cluster, err, tt.want)
		}
		for _, v := range []string{"-5", "100000000", "-2", "=7", "9223372036854775807", "25h", "99999999999999999999", "2147483648"} {
			if err != nil && strings.Contains(err.Error(), v) {
				t.Errorf("ParseRedis(%q): %v shows the value %s", tt.spec, err, v)
			}
		}
	}
}

// TestEveryRedisOptionHasARange: each URL option that takes a number or a
// duration has a row in docs/configuration.md's table of ranges (whose rows
// TestREADMERangesAreChecked checks against ParseRedis).
func TestEveryRedisOptionHasARange(t *testing.T) {
	b, err := os.ReadFile("../../../../docs/configuration.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range redisOptions() {
		if (o.kind == kInt || o.kind == kDuration) && !strings.Contains(string(b), "`?"+o.name+"`") {
			t.Errorf("docs/configuration.md's table of ranges lacks ?%s", o.name)
		}
	}
}
