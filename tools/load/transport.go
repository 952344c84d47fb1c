package load

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"os"
)

// Kinds of transport error: why an attempt got no HTTP response, as
// TransportErrorKind names it and Result.TransportErrors counts it.
const (
	// TransportRefused: nothing listens at the address (a wrong port, a
	// server that is not up).
	TransportRefused = "connection refused"
	// TransportDNS: the host name did not resolve (a typo in the URL, or no
	// DNS).
	TransportDNS = "DNS lookup failed"
	// TransportTLS: the TLS handshake failed — an untrusted or mismatched
	// certificate, or https:// to a server that does not speak TLS.
	TransportTLS = "TLS error"
	// TransportTimeout: the attempt's or the logical request's deadline
	// passed before a response (Config.Timeout, or the policy's attempt
	// timeout), or the network timed out.
	TransportTimeout = "timeout"
	// TransportReset: the connection was reset or closed by the other side
	// before a response.
	TransportReset = "connection reset"
	// TransportUnreachable: no route to the host or its network.
	TransportUnreachable = "network unreachable"
	// TransportFiles: this process ran out of file descriptors (too many
	// callers for its limit; see ulimit -n).
	TransportFiles = "too many open files"
	// TransportCanceled: the attempt's context was cancelled — the run
	// ended, or its caller's context did. A run does not count these.
	TransportCanceled = "canceled"
	// TransportOther: any other error; Result.FirstTransportError may say
	// more.
	TransportOther = "other"
)

// TransportErrorKind names the kind of err, an error an http.RoundTripper
// returned instead of a response: TransportRefused, TransportDNS, …,
// TransportOther. It reads the error's type and wrapped errors, never its
// message.
func TransportErrorKind(err error) string {
	var dns *net.DNSError
	var cert *tls.CertificateVerificationError
	var record tls.RecordHeaderError
	var alert tls.AlertError
	var unknownCA x509.UnknownAuthorityError
	var hostname x509.HostnameError
	var invalid x509.CertificateInvalidError
	var ne net.Error
	switch {
	case err == nil:
		return ""
	case errors.Is(err, context.Canceled):
		return TransportCanceled
	case errors.As(err, &dns):
		return TransportDNS
	case errors.As(err, &cert), errors.As(err, &record), errors.As(err, &alert),
		errors.As(err, &unknownCA), errors.As(err, &hostname), errors.As(err, &invalid):
		return TransportTLS
	}
	if kind := errnoKind(err); kind != "" {
		return kind
	}
	switch {
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return TransportReset
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, os.ErrDeadlineExceeded),
		errors.As(err, &ne) && ne.Timeout():
		return TransportTimeout
	}
	return TransportOther
}
