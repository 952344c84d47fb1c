// Package context is a stand-in for golang.org/x/net/context, written
// anew: its Context is an alias of the standard library's.
package context

import (
	"context"
	"time"
)

// Context is the standard library's context.Context.
type Context = context.Context

// Background returns the standard library's background context.
func Background() Context { return context.Background() }

// Canceled is the standard library's context.Canceled.
var Canceled = context.Canceled

// CancelFunc is the standard library's context.CancelFunc.
type CancelFunc = context.CancelFunc

// WithTimeout hands on to the standard library's.
func WithTimeout(parent Context, d time.Duration) (Context, CancelFunc) {
	return context.WithTimeout(parent, d)
}
