// Package buildinfo reports what the Go toolchain recorded in the binary:
// version, revision, platform and the versions of the Kafka and Redis
// clients, for the version command, and the client ID shardpipe gives
// its Kafka clients.
package buildinfo

import (
	"fmt"
	"io"
	"runtime/debug"
	"strings"
)

// Write writes Format of this binary's build information
// (debug.ReadBuildInfo) to w.
func Write(w io.Writer) error {
	bi, ok := debug.ReadBuildInfo()
	return Format(w, bi, ok)
}

// noVCS says why a binary may carry no revision: Go records the VCS
// settings only with -buildvcs (auto or true) in a git checkout, and
// finds none in a linked worktree, whose .git is a file (golang/go#58218).
const noVCS = "(no VCS information: built with -buildvcs=false, or outside a git checkout, or in a linked git worktree, where Go records none; `make build` in a checkout embeds it)"

// Format writes bi, as debug.ReadBuildInfo returned it with ok: the main
// module's version ("(devel)" for a build outside a module version), its
// path, the Go version, the VCS revision, whether the tree was modified
// and the commit time (vcs.revision, vcs.modified, vcs.time; a line saying
// why when the build recorded none), the platform, and the versions of
// franz-go and go-redis. It returns w's first error.
func Format(w io.Writer, bi *debug.BuildInfo, ok bool) error {
	var b strings.Builder
	if !ok || bi == nil {
		b.WriteString("shardpipe (no build information)\n")
		_, err := io.WriteString(w, b.String())
		return err
	}
	v := bi.Main.Version
	if v == "" {
		v = "(devel)"
	}
	settings := map[string]string{}
	for _, s := range bi.Settings {
		settings[s.Key] = s.Value
	}
	fmt.Fprintf(&b, "shardpipe %s\n", v)
	fmt.Fprintf(&b, "  module   %s\n", bi.Main.Path)
	fmt.Fprintf(&b, "  go       %s\n", bi.GoVersion)
	if r := settings["vcs.revision"]; r != "" {
		fmt.Fprintf(&b, "  revision %s\n", r)
		switch m := settings["vcs.modified"]; m {
		case "true":
			b.WriteString("  modified true (the tree had changes not committed)\n")
		case "":
		default:
			fmt.Fprintf(&b, "  modified %s\n", m)
		}
		if t := settings["vcs.time"]; t != "" {
			fmt.Fprintf(&b, "  time     %s\n", t)
		}
	} else {
		fmt.Fprintf(&b, "  revision %s\n", noVCS)
	}
	fmt.Fprintf(&b, "  platform %s/%s\n", settings["GOOS"], settings["GOARCH"])
	for _, d := range bi.Deps {
		if d.Path == "github.com/twmb/franz-go" || d.Path == "github.com/redis/go-redis/v9" {
			fmt.Fprintf(&b, "  dep      %s %s\n", d.Path, d.Version)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}
