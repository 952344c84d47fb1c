// Package retry is a stub of go-containerregistry's internal retry.
package retry

import "github.com/google/go-containerregistry/internal/retry/wait"

// Backoff is wait.Backoff.
type Backoff = wait.Backoff
