package buildinfo

import (
	"os"
	"runtime/debug"
	"strings"
)

// ClientID is the Kafka client ID of every client shardpipe makes:
// "shardpipe/VERSION@HOST", so that status, the broker's logs and quotas
// tell its members apart and name the build. VERSION is the main module's
// version, "devel" for a build outside a module version; HOST is the host
// name with spaces as '_', "unknown" when it cannot be read.
func ClientID() string {
	v := ""
	if bi, ok := debug.ReadBuildInfo(); ok {
		v = bi.Main.Version
	}
	host, err := os.Hostname()
	if err != nil {
		host = ""
	}
	return clientID(v, host)
}

// clientID is ClientID of a module version and a host name.
func clientID(version, host string) string {
	if version == "" || version == "(devel)" {
		version = "devel"
	}
	if host == "" {
		host = "unknown"
	}
	return "shardpipe/" + version + "@" + strings.ReplaceAll(host, " ", "_")
}

// Version is the main module's version, "devel" for a build outside a
// module version.
func Version() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "devel"
}
