package chaoscheck

import (
	"os/exec"
	"strings"
	"testing"
)

// TestIndependent enforces the package's independence rule: the checker,
// its command and the receiver that records guard mode's effect calls
// import no shardpipe package, so they cannot share a bug with the code
// they judge.
func TestIndependent(t *testing.T) {
	self := map[string]bool{
		"github.com/shardpipe/shardpipe/internal/harness/chaoscheck":     true,
		"github.com/shardpipe/shardpipe/internal/harness/cmd/chaoscheck": true,
		"github.com/shardpipe/shardpipe/internal/harness/cmd/receiver":   true,
	}
	for pkg := range self {
		out, err := exec.Command("go", "list", "-deps", pkg).CombinedOutput()
		if err != nil {
			t.Fatalf("go list -deps %s: %v\n%s", pkg, err, out)
		}
		for _, dep := range strings.Fields(string(out)) {
			if strings.HasPrefix(dep, "github.com/shardpipe/shardpipe") && !self[dep] {
				t.Errorf("%s imports %s: the checker must not use shardpipe's packages", pkg, dep)
			}
		}
	}
}
