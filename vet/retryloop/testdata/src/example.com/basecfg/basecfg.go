// Package basecfg is a stand-in for a library whose options struct other
// packages define their own types from.
package basecfg

import "time"

// Options configures a client.
type Options struct {
	Timeout time.Duration
	Backoff time.Duration
}
