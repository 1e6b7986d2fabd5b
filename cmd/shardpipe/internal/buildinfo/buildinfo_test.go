package buildinfo

import (
	"runtime/debug"
	"strings"
	"testing"
)

// TestFormat: the module version, the VCS revision, whether the tree was
// modified and the commit time, from what the toolchain recorded; without
// VCS information the revision line says why it may be missing.
func TestFormat(t *testing.T) {
	vcs := []debug.BuildSetting{{Key: "GOOS", Value: "linux"}, {Key: "GOARCH", Value: "amd64"}, {Key: "vcs", Value: "git"},
		{Key: "vcs.revision", Value: "49626d6625050ac37b9b77b40658dd569dbdba77"}, {Key: "vcs.time", Value: "2026-11-30T04:00:00Z"}}
	main := debug.Module{Path: "github.com/shardpipe/shardpipe", Version: "v1.4.0"}
	deps := []*debug.Module{{Path: "github.com/twmb/franz-go", Version: "v1.22.3"}, {Path: "golang.org/x/sys", Version: "v0.1.0"}}
	tests := []struct {
		name string
		bi   *debug.BuildInfo
		ok   bool
		want []string // lines, each exactly
	}{
		{"released, clean", &debug.BuildInfo{GoVersion: "go1.26.8", Main: main, Deps: deps,
			Settings: append(vcs, debug.BuildSetting{Key: "vcs.modified", Value: "false"})}, true, []string{
			"shardpipe v1.4.0",
			"  module   github.com/shardpipe/shardpipe",
			"  go       go1.26.8",
			"  revision 49626d6625050ac37b9b77b40658dd569dbdba77",
			"  modified false",
			"  time     2026-11-30T04:00:00Z",
			"  platform linux/amd64",
			"  dep      github.com/twmb/franz-go v1.22.3"}},
		{"devel, modified", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: main.Path, Version: "(devel)"},
			Settings: append(vcs, debug.BuildSetting{Key: "vcs.modified", Value: "true"})}, true, []string{
			"shardpipe (devel)",
			"  module   github.com/shardpipe/shardpipe",
			"  go       go1.26.8",
			"  revision 49626d6625050ac37b9b77b40658dd569dbdba77",
			"  modified true (the tree had changes not committed)",
			"  time     2026-11-30T04:00:00Z",
			"  platform linux/amd64"}},
		{"no VCS information", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: main.Path},
			Settings: []debug.BuildSetting{{Key: "GOOS", Value: "linux"}, {Key: "GOARCH", Value: "arm64"}}}, true, []string{
			"shardpipe (devel)",
			"  module   github.com/shardpipe/shardpipe",
			"  go       go1.26.8",
			"  revision (no VCS information: built with -buildvcs=false, or outside a git checkout, or in a linked git worktree, where Go records none; `make build` in a checkout embeds it)",
			"  platform linux/arm64"}},
		{"no build information", nil, false, []string{"shardpipe (no build information)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b strings.Builder
			if err := Format(&b, tt.bi, tt.ok); err != nil {
				t.Fatal(err)
			}
			if got := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n"); strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("got:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}
