// Package config is how the constructors of breaker, budget and limit
// report a configuration they refuse: one error type, exported by each of
// those packages under the name ConfigError, and the Must that each
// package's Must calls.
package config

import "fmt"

// Error reports one configuration field a constructor refused. It wraps
// the refusing package's sentinel (breaker.ErrConfig, budget.ErrConfig,
// limit.ErrConfig), so errors.Is tells the packages apart, and it is the
// same type in all of them, so errors.As with any of their ConfigError
// types catches every one.
type Error struct {
	// Field names the refused field as Type.Field, for example
	// "Config.Capacity".
	Field string
	// Value is the value refused.
	Value any
	// Want says what the field accepts, for example "0 to 2147483647".
	Want string
	// Err is the refusing package's sentinel.
	Err error
}

// Error returns "pkg: invalid configuration: Type.Field = value: want …".
func (e *Error) Error() string {
	return fmt.Sprintf("%v: %s = %v: want %s", e.Err, e.Field, e.Value, e.Want)
}

// Unwrap returns the refusing package's sentinel.
func (e *Error) Unwrap() error { return e.Err }

// Must returns v, or panics with err if it is not nil.
func Must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
