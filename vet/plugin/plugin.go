// Package plugin registers recoil's retry-loop analyzer as a golangci-lint
// module plugin named "recoilvet".
//
// Build a golangci-lint that includes it with a .custom-gcl.yml (until
// recoil is tagged, path names a clone's vet module; once tagged, version
// names the tag instead):
//
//	version: v2.15.0
//	name: golangci-lint-recoil
//	destination: ./bin
//	plugins:
//	  - module: github.com/recoil-go/recoil/vet
//	    import: github.com/recoil-go/recoil/vet/plugin
//	    path: ../recoil/vet
//
// then `golangci-lint custom` (it writes ./bin/golangci-lint-recoil) and
// enable it in .golangci.yml:
//
//	version: "2"
//	linters:
//	  enable:
//	    - recoilvet
//	  settings:
//	    custom:
//	      recoilvet:
//	        type: module
//	        description: retry loops and retry settings that amplify failures
//
// The plugin takes no settings; any given are an error.
package plugin

import (
	"fmt"

	"github.com/golangci/plugin-module-register/register"
	"github.com/recoil-go/recoil/vet/retryloop"
	"golang.org/x/tools/go/analysis"
)

// Name is the plugin's name in golangci-lint's configuration.
const Name = "recoilvet"

func init() {
	register.Plugin(Name, New)
}

// Settings are the plugin's settings: none yet.
type Settings struct{}

// Plugin is the golangci-lint plugin. Its zero value is usable and it is
// safe for concurrent use.
type Plugin struct{}

// New returns the plugin; settings must be empty (nil, or an empty map).
func New(settings any) (register.LinterPlugin, error) {
	if settings != nil {
		if _, err := register.DecodeSettings[Settings](settings); err != nil {
			return nil, fmt.Errorf("recoilvet: %w", err)
		}
	}
	return &Plugin{}, nil
}

// BuildAnalyzers returns the retry-loop analyzer.
func (*Plugin) BuildAnalyzers() ([]*analysis.Analyzer, error) {
	return []*analysis.Analyzer{retryloop.Analyzer}, nil
}

// GetLoadMode says the analyzer needs type information.
func (*Plugin) GetLoadMode() string { return register.LoadModeTypesInfo }
