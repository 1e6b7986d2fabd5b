package integration

import (
	"strings"
	"testing"
)

// TestHostNetwork: SHARDPIPE_DOCKER_NETWORK is empty (Docker's own network,
// ports mapped) or host; any other value is an error naming the variable.
func TestHostNetwork(t *testing.T) {
	for _, tc := range []struct {
		value   string
		host    bool
		wantErr string
	}{
		{value: "", host: false},
		{value: "host", host: true},
		{value: "bridge", wantErr: `SHARDPIPE_DOCKER_NETWORK="bridge": the only value is host`},
		{value: "HOST", wantErr: `SHARDPIPE_DOCKER_NETWORK="HOST"`},
	} {
		t.Run(tc.value, func(t *testing.T) {
			t.Setenv(EnvDockerNetwork, tc.value)
			host, err := hostNetwork()
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("hostNetwork() = %v, %v; want an error containing %q", host, err, tc.wantErr)
				}
				return
			}
			if err != nil || host != tc.host {
				t.Fatalf("hostNetwork() = %v, %v; want %v, nil", host, err, tc.host)
			}
		})
	}
}

// TestFreePortsDistinct: the host-network containers get distinct free ports.
func TestFreePortsDistinct(t *testing.T) {
	ports, err := freePorts(3)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int]bool{}
	for _, p := range ports {
		if p <= 0 || seen[p] {
			t.Fatalf("freePorts(3) = %v: want three distinct positive ports", ports)
		}
		seen[p] = true
	}
}
