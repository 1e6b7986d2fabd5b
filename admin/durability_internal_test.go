package admin

import (
	"errors"
	"testing"
)

// TestJudge: which settings break the ledger (a *CheckError with its
// sentinel), which are accepted as Risks, and which pass.
func TestJudge(t *testing.T) {
	tests := []struct {
		name    string
		s       NodeSettings
		cfg     DurabilityConfig
		errs    []error  // sentinels, in order
		risks   []string // Risk.Setting, in order
		riskErr error    // the sentinel of the first risk, if accepted
	}{
		{"good", NodeSettings{Config: map[string]string{"maxmemory-policy": "noeviction", "appendonly": "yes", "appendfsync": "always", "save": ""}}, DurabilityConfig{}, nil, nil, nil},
		{"evicting", NodeSettings{Config: map[string]string{"maxmemory-policy": "allkeys-lru", "appendonly": "yes", "appendfsync": "always"}}, DurabilityConfig{}, []error{ErrEviction}, nil, nil},
		{"volatile evicts ledger keys too", NodeSettings{Config: map[string]string{"maxmemory-policy": "volatile-lru", "appendonly": "yes", "appendfsync": "always"}}, DurabilityConfig{}, []error{ErrEviction}, nil, nil},
		{"eviction allowed", NodeSettings{Config: map[string]string{"maxmemory-policy": "allkeys-lru", "appendonly": "yes", "appendfsync": "always"}}, DurabilityConfig{AllowEviction: true}, nil, []string{"maxmemory-policy"}, ErrEviction},
		{"no persistence", NodeSettings{Config: map[string]string{"maxmemory-policy": "noeviction", "appendonly": "no", "save": ""}}, DurabilityConfig{}, []error{ErrNoPersistence}, nil, nil},
		{"both", NodeSettings{Config: map[string]string{"maxmemory-policy": "allkeys-lru", "appendonly": "no", "save": " "}}, DurabilityConfig{}, []error{ErrEviction, ErrNoPersistence}, nil, nil},
		{"no persistence allowed", NodeSettings{Config: map[string]string{"appendonly": "no", "save": ""}}, DurabilityConfig{AllowNoPersistence: true}, nil, []string{"appendonly"}, ErrNoPersistence},
		{"snapshots only", NodeSettings{Config: map[string]string{"appendonly": "no", "save": "3600 1"}}, DurabilityConfig{}, nil, []string{"appendonly"}, nil},
		{"everysec without WAITAOF", NodeSettings{Config: map[string]string{"appendonly": "yes", "appendfsync": "everysec"}, WaitAOF: WaitAOFAbsent}, DurabilityConfig{}, nil, []string{"appendfsync"}, nil},
		{"everysec with WAITAOF", NodeSettings{Config: map[string]string{"appendonly": "yes", "appendfsync": "everysec"}, WaitAOF: WaitAOFOn}, DurabilityConfig{}, nil, nil, nil},
		{"fsync no", NodeSettings{Config: map[string]string{"appendonly": "yes", "appendfsync": "no"}, WaitAOF: WaitAOFOn}, DurabilityConfig{}, nil, []string{"appendfsync"}, nil},
		{"CONFIG GET refused", NodeSettings{ConfigErr: errors.New("NOPERM")}, DurabilityConfig{}, nil, []string{"CONFIG GET"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.s.Addr = "h:1"
			var risks []Risk
			errs := tt.s.judge(tt.cfg, &risks)
			if len(errs) != len(tt.errs) {
				t.Fatalf("errors %v, want %v", errs, tt.errs)
			}
			for i, e := range errs {
				var ce *CheckError
				if !errors.Is(e, tt.errs[i]) || !errors.As(e, &ce) || ce.Server != "redis h:1" || ce.Fix == "" || ce.Value == "" {
					t.Errorf("error %d: %#v, want a *CheckError on redis h:1 wrapping %v with its value and fix", i, e, tt.errs[i])
				}
			}
			if len(risks) != len(tt.risks) {
				t.Fatalf("risks %+v, want settings %v", risks, tt.risks)
			}
			for i, r := range risks {
				if r.Setting != tt.risks[i] || r.Addr != "h:1" || r.Message == "" {
					t.Errorf("risk %d: %+v, want setting %s on h:1", i, r, tt.risks[i])
				}
			}
			if len(risks) > 0 && !errors.Is(risks[0].Err, tt.riskErr) || tt.riskErr != nil && risks[0].Err == nil {
				t.Errorf("risk error %v, want %v", risks[0].Err, tt.riskErr)
			}
		})
	}
}
