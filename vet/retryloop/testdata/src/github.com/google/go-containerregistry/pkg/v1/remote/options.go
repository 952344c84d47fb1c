// Package remote is a stub of go-containerregistry's remote: every
// registry call is retried on the Backoff WithRetryBackoff gives
// (Duration 1 s, Factor 3, Jitter 0.1, Steps 3 by default).
package remote

import "github.com/google/go-containerregistry/internal/retry"

// Backoff is the retry schedule.
type Backoff = retry.Backoff

type options struct{ backoff Backoff }

// Option configures the registry calls.
type Option func(*options) error

// WithRetryBackoff sets the schedule of the calls' retries.
func WithRetryBackoff(b Backoff) Option {
	return func(o *options) error { o.backoff = b; return nil }
}

// Image fetches an image.
func Image(ref string, opts ...Option) error { return nil }
