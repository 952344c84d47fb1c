package load

// errnoKind returns "": Plan 9 reports network errors as strings, which
// TransportErrorKind does not read, so they count as TransportOther.
func errnoKind(error) string { return "" }
