// Package transport is a stub of go-containerregistry's transport.
package transport

import (
	"net/http"

	"github.com/google/go-containerregistry/internal/retry"
)

// Backoff is the retry schedule.
type Backoff = retry.Backoff

type options struct{ backoff Backoff }

// Option configures NewRetry.
type Option func(*options)

// WithRetryBackoff sets the schedule of the transport's retries.
func WithRetryBackoff(b Backoff) Option { return func(o *options) { o.backoff = b } }

// NewRetry wraps inner in a transport that retries temporary failures.
func NewRetry(inner http.RoundTripper, opts ...Option) http.RoundTripper { return inner }
