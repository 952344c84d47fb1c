//go:build !plan9 && !windows

package load

import (
	"errors"
	"syscall"
)

// errnoKind names the kind of a transport error that wraps a system error
// number, or returns "".
func errnoKind(err error) string {
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return TransportRefused
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.ECONNABORTED), errors.Is(err, syscall.EPIPE):
		return TransportReset
	case errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH):
		return TransportUnreachable
	case errors.Is(err, syscall.EMFILE), errors.Is(err, syscall.ENFILE):
		return TransportFiles
	}
	return ""
}
