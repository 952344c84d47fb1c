package recoilotel

import "strings"

// Redacted reports whether url.full carries no value for the query
// parameter name.
func Redacted(name string) bool { return redactedParams[strings.ToLower(name)] }

// ErrorType is errorType, for tests.
var ErrorType = errorType
