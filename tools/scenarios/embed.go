// Package scenarios holds the simulator's built-in scenarios: documented
// YAML files a user can copy and edit. Run one by name with
//
//	recoil sim gateway-outage
//
// or copy it out of the repository's scenarios directory and run the copy.
package scenarios

import "embed"

// FS holds the scenario files, named <name>.yaml.
//
//go:embed *.yaml
var FS embed.FS
