// want package:"offline"

// Package retrycfg is a client's configuration, set by its users and by a
// session package elsewhere: nothing here assigns a field.
package retrycfg

import "time"

// Config holds a client's retry settings.
type Config struct {
	MaxRetries *int
	RetryDelay *time.Duration
}

// Options holds a poller's settings.
type Options struct {
	Backoff time.Duration
}

// State is what a poller last saw: not a setting.
type State struct {
	Next time.Duration
}
