package admin

import "testing"

func TestVersionAtLeast(t *testing.T) {
	tests := []struct {
		version string
		want    bool
		err     bool
	}{
		{"7.0.15", true, false},
		{"7.0.0", true, false},
		{"7.2.4", true, false},
		{"8.0.2", true, false},
		{"10.0.0", true, false},
		{"8.0-m01", true, false},
		{"6.2.14", false, false},
		{"6.9.99", false, false},
		{"5.0.7", false, false},
		{"7", false, true},
		{"", false, true},
		{"x.y.z", false, true},
		{"7.x", false, true},
	}
	for _, tt := range tests {
		t.Run(tt.version, func(t *testing.T) {
			got, err := versionAtLeast(tt.version, 7, 0)
			if (err != nil) != tt.err {
				t.Fatalf("versionAtLeast(%q): error %v, want error %v", tt.version, err, tt.err)
			}
			if got != tt.want {
				t.Fatalf("versionAtLeast(%q) = %v, want %v", tt.version, got, tt.want)
			}
		})
	}
}

func TestParseInfo(t *testing.T) {
	text := "# Server\r\nredis_version:7.0.15\r\nredis_git_sha1:00000000\r\nredis_mode:standalone\r\n\r\n# Cluster\r\ncluster_enabled:0\r\n"
	got := parseInfo(text)
	for k, want := range map[string]string{"redis_version": "7.0.15", "redis_mode": "standalone", "cluster_enabled": "0"} {
		if got[k] != want {
			t.Errorf("%s = %q, want %q (all: %v)", k, got[k], want, got)
		}
	}
	if len(got) != 4 {
		t.Errorf("%d fields, want 4: %v", len(got), got)
	}
}
