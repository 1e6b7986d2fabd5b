package settings

import (
	"testing"
)

// TestInFlightDefaultForEffect: --effect http runs DefaultHTTPInFlight
// effects at once per partition unless --max-in-flight (or its variable)
// was given, 0 included; other effects keep batches by default. (The
// variable's case: TestRunHTTPInFlightDefault.)
func TestInFlightDefaultForEffect(t *testing.T) {
	for _, tc := range []struct {
		args     []string
		env      string // SHARDPIPE_MAX_IN_FLIGHT
		external bool
		want     int
	}{
		{nil, "", true, DefaultHTTPInFlight},
		{nil, "", false, 0},
		{[]string{"--max-in-flight=0"}, "", true, 0},
		{[]string{"--max-in-flight=4"}, "", true, 4},
		{[]string{"--max-in-flight=4"}, "", false, 4},
	} {
		if tc.env != "" {
			t.Setenv("SHARDPIPE_MAX_IN_FLIGHT", tc.env)
		}
		var ic InFlight
		g := InFlightGroup(&ic)
		if bad := load(t, g, tc.args...); len(bad) > 0 {
			t.Fatalf("%q: %q", tc.args, bad)
		}
		ic.ForEffect(tc.external)
		if ic.PerPartition != tc.want {
			t.Errorf("%q env %q external %v: --max-in-flight %d, want %d", tc.args, tc.env, tc.external, ic.PerPartition, tc.want)
		}
	}
}
