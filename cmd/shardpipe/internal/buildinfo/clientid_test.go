package buildinfo

import (
	"os"
	"strings"
	"testing"
)

func TestClientIDOf(t *testing.T) {
	tests := []struct{ version, host, want string }{
		{"v1.2.3", "web-1", "shardpipe/v1.2.3@web-1"},
		{"(devel)", "web-1", "shardpipe/devel@web-1"},
		{"", "web-1", "shardpipe/devel@web-1"},
		{"v1.2.3", "", "shardpipe/v1.2.3@unknown"},
		{"v1.2.3", "my laptop", "shardpipe/v1.2.3@my_laptop"},
	}
	for _, tt := range tests {
		if got := clientID(tt.version, tt.host); got != tt.want {
			t.Errorf("clientID(%q, %q) = %q, want %q", tt.version, tt.host, got, tt.want)
		}
	}
}

// TestClientIDNamesThisHost: the ID of this binary names shardpipe and
// this host (a test binary's version is devel).
func TestClientIDNamesThisHost(t *testing.T) {
	host, err := os.Hostname()
	if err != nil || host == "" {
		t.Skip("no host name")
	}
	if got := ClientID(); got != "shardpipe/devel@"+strings.ReplaceAll(host, " ", "_") {
		t.Errorf("ClientID() = %q, want shardpipe/devel@%s", got, host)
	}
}
