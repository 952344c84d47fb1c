//go:build !plan9

// The errors built here wrap system error numbers, which Plan 9 does not
// have.

package load

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestTransportErrorKind(t *testing.T) {
	dial := func(err error) error {
		return &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", err)}
	}
	tests := []struct {
		err  error
		want string
	}{
		{nil, ""},
		{dial(syscall.ECONNREFUSED), TransportRefused},
		{&net.OpError{Op: "dial", Err: &net.DNSError{Err: "no such host", Name: "x.invalid", IsNotFound: true}}, TransportDNS},
		{&net.DNSError{Err: "i/o timeout", IsTimeout: true}, TransportDNS},
		{&tls.CertificateVerificationError{Err: x509.UnknownAuthorityError{}}, TransportTLS},
		{tls.RecordHeaderError{Msg: "first record does not look like a TLS handshake"}, TransportTLS},
		{tls.AlertError(42), TransportTLS},
		{x509.HostnameError{Host: "x"}, TransportTLS},
		{context.DeadlineExceeded, TransportTimeout},
		{fmt.Errorf("read: %w", os.ErrDeadlineExceeded), TransportTimeout},
		{&net.OpError{Op: "read", Err: os.NewSyscallError("read", syscall.ECONNRESET)}, TransportReset},
		{io.EOF, TransportReset},
		{fmt.Errorf("net/http: %w", io.ErrUnexpectedEOF), TransportReset},
		{dial(syscall.EHOSTUNREACH), TransportUnreachable},
		{dial(syscall.ENETUNREACH), TransportUnreachable},
		{&net.OpError{Op: "dial", Err: os.NewSyscallError("socket", syscall.EMFILE)}, TransportFiles},
		{context.Canceled, TransportCanceled},
		{fmt.Errorf("attempt: %w", context.Canceled), TransportCanceled},
		{errors.New("http: server gave HTTP response to HTTPS client"), TransportOther},
	}
	for _, tt := range tests {
		if got := TransportErrorKind(tt.err); got != tt.want {
			t.Errorf("TransportErrorKind(%v) = %q, want %q", tt.err, got, tt.want)
		}
	}
}

// closedAddr returns a loopback address nothing listens on.
func closedAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// A run whose attempts get no response says why, by kind, with the first
// error's message, and puts it in words.
func TestRunCountsTransportErrors(t *testing.T) {
	tlsSrv := httptest.NewUnstartedServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	tlsSrv.Config.ErrorLog = log.New(io.Discard, "", 0) // the handshakes that fail are the point
	tlsSrv.StartTLS()
	defer tlsSrv.Close()
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }))
	defer slow.Close()
	// A refused dial and a refused certificate come back at once: their
	// timeout is a minute, which only a stalled process reaches, so a
	// machine busy with -race and other work never turns them into
	// timeouts (a handshake took over 5 s under a load of 15 on 2 cores).
	// Only the slow server's row waits for its timeout.
	tests := []struct {
		name, url, kind, first string
		timeout                time.Duration
	}{
		{"nothing listens", "http://" + closedAddr(t) + "/x", TransportRefused, "connection refused", time.Minute},
		{"untrusted certificate", tlsSrv.URL + "/x", TransportTLS, "certificate", time.Minute},
		{"too slow", slow.URL + "/x", TransportTimeout, "context deadline exceeded", 300 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := preset(t, PresetImmediate)
			p.Policy.MaxAttempts = 2
			res, err := Run(context.Background(), Config{URL: tt.url, MaxRequests: 2, Pause: -1,
				Timeout: tt.timeout, Policy: p})
			if err != nil {
				t.Fatal(err)
			}
			if res.Accepted != 0 || res.TransportErrors[tt.kind] == 0 || len(res.TransportErrors) != 1 {
				t.Errorf("accepted %d, transport errors %v; want none accepted, all %q", res.Accepted, res.TransportErrors, tt.kind)
			}
			if !strings.Contains(res.FirstTransportError, tt.first) {
				t.Errorf("first transport error %q, want it to say %q", res.FirstTransportError, tt.first)
			}
			d := res.Diagnosis()
			if !strings.Contains(d, "attempts got no response: "+tt.kind+" ×") || !strings.Contains(d, res.FirstTransportError) {
				t.Errorf("Diagnosis = %q, want the kind and the first error", d)
			}
		})
	}
}

func TestDiagnosis(t *testing.T) {
	tests := []struct {
		name string
		r    Result
		want string
	}{
		{"all well", Result{Requests: 2, Accepted: 2, Attempts: 2, Statuses: map[int]int64{200: 2}}, ""},
		{"refused", Result{Requests: 3, Attempts: 3, Statuses: map[int]int64{0: 3},
			TransportErrors: map[string]int64{TransportRefused: 3}, FirstTransportError: "dial tcp 127.0.0.1:1: connect: connection refused"},
			"3 of 3 attempts got no response: connection refused ×3 (the first: dial tcp 127.0.0.1:1: connect: connection refused)"},
		{"error statuses", Result{Requests: 2, Attempts: 7, Statuses: map[int]int64{503: 5, 429: 1, 200: 1}},
			"6 of 7 attempts got an error status: 503 ×5, 429 ×1"},
		{"both", Result{Requests: 2, Attempts: 4, Statuses: map[int]int64{0: 1, 500: 3},
			TransportErrors: map[string]int64{TransportTimeout: 1}, FirstTransportError: "context deadline exceeded"},
			"1 of 4 attempts got no response: timeout ×1 (the first: context deadline exceeded); 3 of 4 attempts got an error status: 500 ×3"},
		{"refused by the policy", Result{Requests: 5, Stops: map[string]int{"circuit open": 5}}, "the logical requests stopped: circuit open ×5"},
		{"nothing sent", Result{Requests: 1}, "no attempt was sent"},
	}
	for _, tt := range tests {
		if got := tt.r.Diagnosis(); got != tt.want {
			t.Errorf("%s: Diagnosis = %q, want %q", tt.name, got, tt.want)
		}
	}
}
