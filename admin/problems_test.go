package admin_test

import (
	"errors"
	"testing"

	"github.com/shardpipe/shardpipe/admin"
)

// TestProblems: a joined error splits into its problems, nested joins too,
// and an *UnreachableError stays one problem.
func TestProblems(t *testing.T) {
	a, b, c := errors.New("a"), errors.New("b"), &admin.UnreachableError{Server: "kafka", Request: "Metadata", Err: errors.New("down")}
	tests := []struct {
		err  error
		want []error
	}{
		{nil, nil},
		{a, []error{a}},
		{c, []error{c}},
		{errors.Join(a, errors.Join(b, c)), []error{a, b, c}},
	}
	for _, tt := range tests {
		got := admin.Problems(tt.err)
		if len(got) != len(tt.want) {
			t.Fatalf("Problems(%v) = %v, want %v", tt.err, got, tt.want)
		}
		for i := range got {
			if got[i] != tt.want[i] {
				t.Fatalf("Problems(%v) = %v, want %v", tt.err, got, tt.want)
			}
		}
	}
}
