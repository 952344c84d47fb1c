// Package ratelimit is a stand-in for a third-party limiter: a policy
// asked before each try, which may count.
package ratelimit

// Limiter refuses a try once its allowance is spent.
type Limiter interface {
	Allow() error
}
