package plugin_test

import (
	"fmt"

	"github.com/golangci/plugin-module-register/register"
	"github.com/recoil-go/recoil/vet/plugin"
)

// golangci-lint finds the plugin by name and builds its analyzers.
func Example() {
	newPlugin, _ := register.GetPlugin(plugin.Name)
	p, _ := newPlugin(nil)
	as, _ := p.BuildAnalyzers()
	fmt.Println(as[0].Name, p.GetLoadMode())
	// Output: recoilvet typesinfo
}
