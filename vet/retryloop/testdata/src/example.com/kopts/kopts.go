// Package kopts stands in, written anew, for an exchange SDK's options
// package: a transport option whose builder sets its defaults, and
// setters only the SDK's users call.
package kopts

import (
	"math/rand"
	"time"
)

// TransportOption holds the HTTP transport's settings.
type TransportOption struct {
	MaxRetries int
	RetryDelay time.Duration
	Spread     time.Duration
}

// TransportOptionBuilder builds a TransportOption.
type TransportOptionBuilder struct{ option *TransportOption }

// NewTransportOptionBuilder starts from the defaults.
func NewTransportOptionBuilder() *TransportOptionBuilder {
	return &TransportOptionBuilder{option: &TransportOption{
		MaxRetries: 3,
		RetryDelay: 2 * time.Second,
		Spread:     time.Duration(rand.Int63n(int64(2 * time.Second))),
	}}
}

// SetRetryDelay sets the delay between retries.
func (b *TransportOptionBuilder) SetRetryDelay(d time.Duration) *TransportOptionBuilder {
	b.option.RetryDelay = d
	return b
}

// Build returns the option.
func (b *TransportOptionBuilder) Build() *TransportOption { return b.option }
