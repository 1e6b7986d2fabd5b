package main

import (
	"os"
	"runtime/debug"
	"strings"

	"github.com/twmb/franz-go/pkg/kgo"
)

// clientID is the Kafka client ID of every client shardpipe makes:
// "shardpipe/VERSION@HOST", so that status, the broker's logs and quotas
// tell its members apart and name the build (VERSION "devel" for a build
// outside a module version; HOST "unknown" when the host name cannot be
// read).
func clientID() string {
	v := "devel"
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		v = bi.Main.Version
	}
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "unknown"
	}
	return "shardpipe/" + v + "@" + strings.ReplaceAll(host, " ", "_")
}

// clientIDOpt sets clientID on a franz-go client.
func clientIDOpt() kgo.Opt { return kgo.ClientID(clientID()) }
