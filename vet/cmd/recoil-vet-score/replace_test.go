package main

import (
	"slices"
	"testing"
)

// TestLocalReplaces checks which replace directives a module's copy drops:
// those whose new side is a directory of the module's own repository,
// named with their version when they have one (gnmic v0.47.0's
// `replace github.com/openconfig/gnmic/pkg/api v0.1.11 => ./pkg/api`,
// which go mod edit -dropreplace=path alone leaves in place).
func TestLocalReplaces(t *testing.T) {
	tests := []struct {
		name, gomod string
		want        []string
	}{
		{"versioned", "module m\n\nreplace github.com/openconfig/gnmic/pkg/api v0.1.11 => ./pkg/api\n", []string{"github.com/openconfig/gnmic/pkg/api@v0.1.11"}},
		{"unversioned", "module m\n\nreplace example.com/api => ../../api\n", []string{"example.com/api"}},
		{"block", "module m\n\nreplace (\n\texample.com/a => ./a\n\texample.com/b v1.2.3 => ../b\n\texample.com/c => example.com/c2 v1.0.0\n)\n", []string{"example.com/a", "example.com/b@v1.2.3"}},
		{"module replacement kept", "module m\n\nreplace example.com/c v1.0.0 => example.com/c2 v1.0.1\n", nil},
		{"none", "module m\n\ngo 1.22\n", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := localReplaces(tt.gomod); !slices.Equal(got, tt.want) {
				t.Errorf("localReplaces = %q, want %q", got, tt.want)
			}
		})
	}
}
