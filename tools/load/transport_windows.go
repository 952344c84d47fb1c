package load

import (
	"errors"
	"syscall"
)

// Windows Sockets error codes (learn.microsoft.com, "Windows Sockets Error
// Codes"), which Windows reports where Unix reports the syscall.E*
// numbers; the syscall package does not name them all.
const (
	wsaEMFILE       = syscall.Errno(10024)
	wsaENETUNREACH  = syscall.Errno(10051)
	wsaECONNABORTED = syscall.Errno(10053)
	wsaECONNRESET   = syscall.Errno(10054)
	wsaECONNREFUSED = syscall.Errno(10061)
	wsaEHOSTUNREACH = syscall.Errno(10065)
)

// errnoKind names the kind of a transport error that wraps a system error
// number, or returns "".
func errnoKind(err error) string {
	is := func(errnos ...syscall.Errno) bool {
		for _, e := range errnos {
			if errors.Is(err, e) {
				return true
			}
		}
		return false
	}
	switch {
	case is(wsaECONNREFUSED, syscall.ECONNREFUSED):
		return TransportRefused
	case is(wsaECONNRESET, wsaECONNABORTED, syscall.ECONNRESET, syscall.ECONNABORTED, syscall.EPIPE):
		return TransportReset
	case is(wsaEHOSTUNREACH, wsaENETUNREACH, syscall.EHOSTUNREACH, syscall.ENETUNREACH):
		return TransportUnreachable
	case is(wsaEMFILE, syscall.EMFILE, syscall.ENFILE):
		return TransportFiles
	}
	return ""
}
