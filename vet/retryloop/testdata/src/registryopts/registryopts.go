// Package registryopts holds, written anew, registry clients that hand
// go-containerregistry the schedule of its retries: a Backoff with no
// Jitter sends every client that failed together back together.
package registryopts

import (
	"net/http"
	"time"

	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
)

// Options is the command's settings.
type Options struct {
	RetryCount int
}

// The Backoff turns the library's jitter off, for the calls and for the
// transport.
//
// case: flag nojitter
func newClient(opts Options, rt http.RoundTripper) ([]remote.Option, http.RoundTripper) {
	b := remote.Backoff{
		Duration: 100 * time.Millisecond,
		Factor:   2,
		Jitter:   0,
		Steps:    opts.RetryCount,
		Cap:      time.Second,
	}
	ropts := []remote.Option{remote.WithRetryBackoff(b)}                // want `nojitter: remote.WithRetryBackoff gives go-containerregistry's retries a Backoff with no Jitter`
	return ropts, transport.NewRetry(rt, transport.WithRetryBackoff(b)) // want `nojitter: transport.WithRetryBackoff gives`
}

// Its twin keeps a tenth of jitter.
//
// case: clean
func newJittered(opts Options, rt http.RoundTripper) ([]remote.Option, http.RoundTripper) {
	b := remote.Backoff{Duration: 100 * time.Millisecond, Factor: 2, Jitter: 0.1, Steps: opts.RetryCount}
	return []remote.Option{remote.WithRetryBackoff(b)}, transport.NewRetry(rt, transport.WithRetryBackoff(b))
}

// One try only: no retry to jitter.
//
// case: clean
func fetchOnce(ref string) error {
	return remote.Image(ref, remote.WithRetryBackoff(remote.Backoff{Duration: time.Second, Steps: 1}))
}

// The library's default schedule: no option at all.
//
// case: clean
func fetchDefault(ref string) error {
	return remote.Image(ref)
}

// Left out, the Jitter is zero.
//
// case: flag nojitter
func fetchDoubling(ref string) error {
	return remote.Image(ref, remote.WithRetryBackoff(remote.Backoff{Duration: time.Second, Factor: 2, Steps: 5})) // want `nojitter: remote.WithRetryBackoff gives`
}
