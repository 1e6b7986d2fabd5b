// Package buildinfo reports what the Go toolchain recorded in the binary:
// version, revision, platform and the versions of the Kafka and Redis
// clients, for the version command, and the client ID shardpipe gives
// its Kafka clients.
package buildinfo

import (
	"fmt"
	"io"
	"runtime/debug"
)

// Write writes what runtime/debug knows about this binary: its version,
// module, Go version, source revision and time, platform, and the versions
// of franz-go and go-redis. It returns nothing: w is a terminal or a buffer.
func Write(w io.Writer) {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		fmt.Fprintln(w, "shardpipe (no build information)")
		return
	}
	v := bi.Main.Version
	if v == "" {
		v = "(devel)"
	}
	fmt.Fprintf(w, "shardpipe %s\n", v)
	fmt.Fprintf(w, "  module   %s\n", bi.Main.Path)
	fmt.Fprintf(w, "  go       %s\n", bi.GoVersion)
	settings := map[string]string{}
	for _, s := range bi.Settings {
		settings[s.Key] = s.Value
	}
	if r := settings["vcs.revision"]; r != "" {
		if settings["vcs.modified"] == "true" {
			r += " (modified)"
		}
		fmt.Fprintf(w, "  revision %s\n", r)
	}
	if t := settings["vcs.time"]; t != "" {
		fmt.Fprintf(w, "  time     %s\n", t)
	}
	fmt.Fprintf(w, "  platform %s/%s\n", settings["GOOS"], settings["GOARCH"])
	for _, d := range bi.Deps {
		if d.Path == "github.com/twmb/franz-go" || d.Path == "github.com/redis/go-redis/v9" {
			fmt.Fprintf(w, "  dep      %s %s\n", d.Path, d.Version)
		}
	}
}
