// Package backofflike is a package whose path begins as cenkalti/backoff's
// does but is another one: a Retry that tries once.
package backofflike

// Retry runs op once.
func Retry(op func() error) error { return op() }
