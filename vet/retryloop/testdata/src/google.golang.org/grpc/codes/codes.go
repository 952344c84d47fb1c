// Package codes is a stub of grpc-go's codes.
package codes

type Code uint32

const (
	OK          Code = 0
	Unavailable Code = 14
	NotFound    Code = 5
)
