package plugin_test

import (
	"testing"

	"github.com/golangci/plugin-module-register/register"
	"github.com/recoil-go/recoil/vet/plugin"
	"github.com/recoil-go/recoil/vet/retryloop"
)

func TestRegistered(t *testing.T) {
	tests := []struct {
		name     string
		settings any
		wantErr  bool
	}{
		{"nil settings", nil, false},
		{"empty settings", map[string]any{}, false},
		{"unknown setting", map[string]any{"strict": true}, true},
	}
	newPlugin, err := register.GetPlugin(plugin.Name)
	if err != nil {
		t.Fatalf("GetPlugin(%q): %v", plugin.Name, err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := newPlugin(tt.settings)
			if (err != nil) != tt.wantErr {
				t.Fatalf("New(%v) error = %v, want error %v", tt.settings, err, tt.wantErr)
			}
			if err != nil {
				return
			}
			as, err := p.BuildAnalyzers()
			if err != nil || len(as) != 1 || as[0] != retryloop.Analyzer {
				t.Errorf("BuildAnalyzers() = %v, %v; want [retryloop.Analyzer]", as, err)
			}
			if got := p.GetLoadMode(); got != register.LoadModeTypesInfo {
				t.Errorf("GetLoadMode() = %q, want %q", got, register.LoadModeTypesInfo)
			}
		})
	}
}
