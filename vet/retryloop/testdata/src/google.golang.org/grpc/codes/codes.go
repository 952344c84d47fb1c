// Package codes is a stub of grpc-go's codes.
package codes

type Code uint32

const (
	OK          Code = 0
	Unavailable Code = 14
	NotFound    Code = 5
	// FailedPrecondition is the code of a call the system is not ready for.
	FailedPrecondition Code = 9
	// Unimplemented is the code of a method the server does not have.
	Unimplemented Code = 12
)
