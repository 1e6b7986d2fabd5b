package settings

import (
	"testing"
	"time"
)

func TestProbeGroups(t *testing.T) {
	tests := []struct {
		args []string
		want []string
		p    Probe
	}{
		{nil, nil, Probe{URL: "http://127.0.0.1:9464/readyz", Timeout: 5 * time.Second}},
		{[]string{"--url=http://h:1/healthz", "--timeout=1s"}, nil, Probe{URL: "http://h:1/healthz", Timeout: time.Second}},
		{[]string{"--timeout=0s"}, []string{"--timeout (SHARDPIPE_TIMEOUT) 0s: want 1ms to 1h"}, Probe{}},
	}
	for _, tt := range tests {
		var p Probe
		bad := load(t, p.Groups()[0], tt.args...)
		checkProblems(t, tt.args, bad, tt.want...)
		if len(tt.want) == 0 && p != tt.p {
			t.Errorf("%q: loaded %+v, want %+v", tt.args, p, tt.p)
		}
	}
}
