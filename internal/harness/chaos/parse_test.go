package chaos

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

func TestMetricLine(t *testing.T) {
	tests := []struct {
		line string
		name string
		val  float64
		ok   bool
	}{
		{`shardpipe_commits_fenced_total{partition="t/3"} 2`, "shardpipe_commits_fenced_total", 2, true},
		{`shardpipe_uncommitted_records 17`, "shardpipe_uncommitted_records", 17, true},
		{`# HELP shardpipe_commits_fenced_total Commits refused.`, "", 0, false},
		{`garbage`, "", 0, false},
		{`x{a="b"} NaNo`, "", 0, false},
	}
	for _, tc := range tests {
		name, val, ok := metricLine(tc.line)
		if name != tc.name || val != tc.val || ok != tc.ok {
			t.Errorf("metricLine(%q) = %q, %v, %v; want %q, %v, %v", tc.line, name, val, ok, tc.name, tc.val, tc.ok)
		}
	}
}

func TestReadLog(t *testing.T) {
	tests := []struct {
		name string
		log  string
		want logFacts
	}{
		{"killed: no summary", `{"msg":"pipeline starting"}
{"msg":"partitions assigned","epoch":3,"partitions":{"t":[0,1]}}
not json
{"msg":"partitions assigned","epoch":5}
`, logFacts{epochs: []int64{3, 5}}},
		{"graceful", `{"msg":"partitions assigned","epoch":1}
{"msg":"summary","attempts":10,"applied":7,"suppressed":3,"rejected":0,"fenced_commits":2}
`, logFacts{epochs: []int64{1}, summary: &figures{suppressed: 3, fenced: 2}}},
		{"empty", "", logFacts{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "c.log")
			if err := os.WriteFile(path, []byte(tc.log), 0o600); err != nil {
				t.Fatal(err)
			}
			got, err := readLog(path)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("readLog = %+v, want %+v", got, tc.want)
			}
		})
	}
}
