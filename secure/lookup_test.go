package secure_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/shardpipe/shardpipe/secure"
)

// names is a Lookup whose every string setting holds its own name and
// whose every switch is on, and that records the names read.
type names map[string]bool

func (n names) String(name string) string { n[name] = true; return name }
func (n names) Bool(name string) bool     { n[name] = true; return true }

// TestValuesFromReadEverySetting: KafkaValuesFrom and RedisValuesFrom read
// exactly the settings KafkaSettings and RedisSettings list, under the
// prefix, each into a field of its own; no usage line names a value.
func TestValuesFromReadEverySetting(t *testing.T) {
	for _, tt := range []struct {
		name     string
		settings []secure.Setting
		read     func(secure.Lookup) any
		fields   int // string fields filled from settings, and TLS
	}{
		{"kafka", secure.KafkaSettings("k-", "PW"), func(l secure.Lookup) any { return secure.KafkaValuesFrom(l, "k-", "PW") }, 10},
		{"redis", secure.RedisSettings("r-", "PW"), func(l secure.Lookup) any { return secure.RedisValuesFrom(l, "r-", "PW") }, 6},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := names{}
			v := reflect.ValueOf(tt.read(got))
			var want []string
			for _, s := range tt.settings {
				want = append(want, s.Name)
				if !got[s.Name] {
					t.Errorf("setting %s is not read", s.Name)
				}
				if s.Usage == "" {
					t.Errorf("setting %s has no usage", s.Name)
				}
			}
			if len(got) != len(want) {
				t.Errorf("read %v, want exactly %v", got, want)
			}
			filled := map[string]bool{}
			for i := range v.NumField() {
				f := v.Field(i)
				switch {
				case f.Kind() == reflect.String && strings.HasPrefix(f.String(), tt.name[:1]+"-"):
					if filled[f.String()] {
						t.Errorf("setting %s fills two fields", f.String())
					}
					filled[f.String()] = true
				case f.Kind() == reflect.Bool && f.Bool():
					filled["tls"] = true
				}
			}
			if len(filled) != tt.fields || len(tt.settings) != tt.fields {
				t.Errorf("%d fields filled from %d settings, want %d: %v", len(filled), len(tt.settings), tt.fields, filled)
			}
		})
	}
}
