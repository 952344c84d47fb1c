// Package errors is a stand-in, written anew, for the parts of
// github.com/pkg/errors the test data calls.
package errors

import (
	stderrors "errors"
	"fmt"
)

// New returns an error with the message text.
func New(text string) error { return stderrors.New(text) }

// Errorf formats an error.
func Errorf(format string, args ...any) error { return fmt.Errorf(format, args...) }

// Wrapf annotates err, or returns nil if err is nil.
func Wrapf(err error, format string, args ...any) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf(format+": %w", append(args, err)...)
}

// Is reports whether err is or wraps target.
func Is(err, target error) bool { return stderrors.Is(err, target) }
