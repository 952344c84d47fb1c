// Package errors is a stub of apimachinery's API errors: the reasons a
// request to the API server failed.
package errors

import "errors"

var (
	errNotFound = errors.New("not found")
	errConflict = errors.New("conflict")
)

// IsNotFound reports whether err says the object does not exist.
func IsNotFound(err error) bool { return errors.Is(err, errNotFound) }

// IsConflict reports whether err says the object changed under the write.
func IsConflict(err error) bool { return errors.Is(err, errConflict) }
