package integration_test

import (
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/shardpipe/shardpipe/sink"
)

// walkFigures are what produce's summary and flags say the walkthrough's
// checks must show.
type walkFigures struct {
	topic                              string
	records, unique, cents, partitions int64
}

var firstNumber = regexp.MustCompile(`\d+`)

// checkWalkOutput checks what a walkthrough command printed against f and
// its comment; a command it does not know fails the test, so a new step
// of the walkthrough gets a check.
func checkWalkOutput(t *testing.T, c docCommand, out string, f walkFigures) {
	t.Helper()
	out = strings.TrimSpace(out)
	commentNumber := func() string { return firstNumber.FindString(c.comment) }
	switch {
	case strings.HasPrefix(c.line, "go build "):
	case strings.Contains(c.line, "./shardpipe status "):
		rows := 0
		for _, l := range strings.Split(out, "\n") {
			if fs := strings.Fields(l); len(fs) >= 6 && fs[0] == f.topic {
				rows++
				if fs[5] != "0" {
					t.Errorf("status: partition %s has lag %s, want 0:\n%s", fs[1], fs[5], out)
				}
			}
		}
		if int64(rows) != f.partitions {
			t.Errorf("status shows %d partitions, want the %d produce made:\n%s", rows, f.partitions, out)
		}
	case strings.Contains(c.line, "--scan") && strings.Contains(c.line, "wc -l"):
		want := strconv.FormatInt(f.unique, 10)
		if out != want || commentNumber() != want {
			t.Errorf("%s: %q ledger entries (comment %q), want one per unique order: %s", c.line, out, c.comment, want)
		}
	case strings.Contains(c.line, " get \"$("):
		// "each naming the record that applied it"
		cl, err := sink.DecodeClaim(out)
		if err != nil || cl.Topic != f.topic || cl.State != sink.ClaimApplied || cl.Offset < 0 || int64(cl.Partition) >= f.partitions {
			t.Errorf("%s: %q (%v), want a ledger entry naming a record of %s, applied", c.line, out, err, f.topic)
		}
	case strings.Contains(c.line, " hvals "):
		if want := strconv.FormatInt(f.cents, 10); out != want {
			t.Errorf("%s: %q cents, want the %s produce printed", c.line, out, want)
		}
	case strings.Contains(c.line, "./shardpipe replay "):
		read, applied, suppressed := replayTotal(t, out)
		if read != f.records || applied != 0 || suppressed != f.records {
			t.Errorf("%s: read %d, applied %d, suppressed %d; want every one of the %d records suppressed:\n%s",
				c.line, read, applied, suppressed, f.records, out)
		}
		if nums := firstNumber.FindAllString(c.comment, -1); strings.Contains(c.line, "--dry-run") && c.comment != "" &&
			(len(nums) != 2 || nums[0] != "0" || nums[1] != strconv.FormatInt(f.records, 10)) {
			t.Errorf("the dry run's comment %q does not say 0 and %d", c.comment, f.records)
		}
	default:
		t.Fatalf("walkthrough command %q: the test does not know what it must show", c.line)
	}
}

// replayTotal returns the read, applied (or would-apply) and suppressed
// figures of replay's total line.
func replayTotal(t *testing.T, out string) (read, applied, suppressed int64) {
	t.Helper()
	for _, l := range strings.Split(out, "\n") {
		if fs := strings.Fields(l); len(fs) >= 4 && fs[0] == "total" {
			n := make([]int64, 3)
			for i := range n {
				v, err := strconv.ParseInt(fs[i+1], 10, 64)
				if err != nil {
					t.Fatalf("replay's total line %q: %v", l, err)
				}
				n[i] = v
			}
			return n[0], n[1], n[2]
		}
	}
	t.Fatalf("replay printed no total line:\n%s", out)
	return 0, 0, 0
}
