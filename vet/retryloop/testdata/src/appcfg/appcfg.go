// Package appcfg is a program's configuration, read from a file: its
// sections are plain structs reached from Config.
package appcfg

import "time"

// Config is the whole configuration.
type Config struct {
	Registry Registry
}

// Registry says how to reach the service registry.
type Registry struct {
	Addr  string
	Retry time.Duration
}
