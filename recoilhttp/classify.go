package recoilhttp

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/recoil-go/recoil"
	"github.com/recoil-go/recoil/hop"
)

// StatusError is the error a failed HTTP attempt is recorded with when a
// response arrived: its status and what the provider's error body said. It
// reaches Summary.LastErr and *recoil.Error.Err, so the one line a call logs
// carries the validator's complaint in its own words. The Transport still
// returns the response itself to its caller (the RoundTripper contract).
type StatusError struct {
	// StatusCode is the response's status code.
	StatusCode int
	// Provider is what the error body said; zero if it said nothing usable.
	Provider ProviderError
	// JSON reports whether the error body was JSON at all.
	JSON bool
}

// Error formats the status and the provider's message.
func (e *StatusError) Error() string {
	s := strconv.Itoa(e.StatusCode) + " " + http.StatusText(e.StatusCode)
	if t := e.Provider.Type; t != "" {
		s += " " + t
	}
	if m := e.Provider.Message; m != "" {
		s += ": " + m
	}
	return s
}

// Codes that Classify puts in recoil.Verdict.Code besides the provider's own
// error types and codes.
const (
	CodeNotFound       = "not_found"       // 404: a retired model? fall back to another (recoil.StatusVerdict's code)
	CodeNonJSON400     = "non_json_400"    // a 400 that is not the provider's JSON: an intermediary's
	CodeDoNotRetry     = "do_not_retry"    // the server said so (x-should-retry: false, Recoil-Retry: no)
	CodeNotReplayable  = "not_replayable"  // the body cannot be sent again (no GetBody)
	CodeNotIdempotent  = "not_idempotent"  // a request that may have run, and may not run twice
	CodeCertificate    = "certificate"     // the server's certificate was refused
	CodeBadScheme      = "bad_scheme"      // not http or https
	CodeConnect        = "connect"         // dial, DNS or TLS handshake: nothing was sent
	CodeConnectionLost = "connection_lost" // reset, EOF, header timeout after sending
	CodeStreamError    = "stream_error"    // an SSE "event: error" before any content
	CodeInProgress     = "in_progress"     // 409: the same idempotency key is still running
	// CodeContextLength marks a 400 whose provider message says the input
	// is longer than the model's context (Anthropic's "prompt is too
	// long", OpenAI's "maximum context length"), as OpenAI's own code
	// context_length_exceeded does: a Fallback moves such a call to a
	// target with a longer context.
	CodeContextLength = "context_length_exceeded"
)

// contextTooLong reports whether a 400's provider error says the input is
// longer than the model's context.
func contextTooLong(pe ProviderError) bool {
	return strings.EqualFold(pe.Code, CodeContextLength) || containsFold(pe.Message, "prompt is too long") ||
		containsFold(pe.Message, "maximum context length") || containsFold(pe.Message, "context window")
}

// Classify decides what one HTTP attempt came to, for a request req that
// either produced resp or failed with err. It reads at most MaxErrorBody of an
// error response's body, for the provider's error, and restores it so the
// caller reads the whole body. now dates HTTP-date and reset headers.
//
// The rules, first match wins:
//
//   - a transport error: a refused certificate or a scheme other than http
//     and https is permanent; a dial, DNS or TLS-handshake failure is
//     transient and nothing was sent; anything else (a reset, an EOF, a
//     response-header timeout) is transient and may have executed;
//   - a status below 400 is a success (the zero Verdict);
//   - x-should-retry (true or false) or Recoil-Retry: no overrides the status;
//   - a 429 whose body says insufficient_quota, credit_balance_exhausted,
//     billing_error or "request too large" is permanent: waiting will not
//     refill a quota; any other 429 is throttled;
//   - 408 is transient; a 409 "in progress" for a request with an
//     idempotency key is transient with a wait of at least a second;
//   - 400, 401, 402, 403, 404, 413 and 422 are permanent; a 400 whose body is
//     not JSON says so (Code non_json_400: a proxy's page, not the payload's
//     fault); a 404 has Code not_found, so a fallback model can
//     be chosen; a 400 whose message says the prompt is longer than the
//     context has Code context_length_exceeded; 401, 402, 403 and 413 have
//     StatusVerdict's code (unauthorized, payment_required, forbidden,
//     too_large: the status says more than a provider's generic error
//     type), the rest the provider's; other 4xx are permanent too;
//   - 503 and 529 are overloaded; 501 and 505 are permanent; every other 5xx
//     is transient.
//
// Retryable verdicts carry the server-directed wait (ServerWait). Whether
// the request may be sent again at all — its method, an idempotency key, a
// replayable body — is the Transport's question, not this function's.
func Classify(req *http.Request, resp *http.Response, err error, now time.Time) recoil.Verdict {
	if resp == nil {
		return classifyError(req, err)
	}
	if resp.StatusCode < 400 {
		return recoil.Verdict{}
	}
	v, _ := classifyStatus(req, resp, hasIdempotencyKey(req), now)
	return v
}

// classifyStatus classifies a response of status 400 or more and returns
// the error to record it with.
// keyed reports that the request carries an idempotency key, the caller's or
// one the Transport generated.
func classifyStatus(req *http.Request, resp *http.Response, keyed bool, now time.Time) (recoil.Verdict, *StatusError) {
	code := resp.StatusCode
	body, _ := PeekBody(resp, MaxErrorBody)
	pe, isJSON, _ := ParseErrorBody(body)
	se := &StatusError{StatusCode: code, Provider: pe, JSON: isJSON}
	wait, _ := ServerWait(resp.Header, now)
	v := recoil.Verdict{Code: firstNonEmpty(pe.Code, pe.Type)}
	retryable := func(c recoil.Class, reason string) (recoil.Verdict, *StatusError) {
		v.Class, v.Wait, v.Reason = c, wait, reason
		return v, se
	}
	permanent := func(code, reason string) (recoil.Verdict, *StatusError) {
		v.Class, v.Reason = recoil.ClassPermanent, reason
		if code != "" {
			v.Code = code
		}
		return v, se
	}
	status := strconv.Itoa(code)
	if r, err := hop.ParseResponse(resp.Header); err == nil && r.NoRetry {
		return permanent(CodeDoNotRetry, status+": the server said not to retry ("+hop.HeaderRetry+": no)")
	}
	switch strings.ToLower(strings.TrimSpace(resp.Header.Get("x-should-retry"))) {
	case "true":
		c := recoil.ClassTransient
		if code == 429 {
			c = recoil.ClassThrottled
		} else if code == 503 || code == 529 {
			c = recoil.ClassOverloaded
		}
		return retryable(c, status+": the server said to retry (x-should-retry: true)")
	case "false":
		return permanent(CodeDoNotRetry, status+": the server said not to retry (x-should-retry: false)")
	}
	switch {
	case code == http.StatusTooManyRequests && pe.QuotaExhausted():
		return permanent("", "429 "+describe(pe, "quota exhausted")+": waiting will not refill it")
	case code == http.StatusConflict && keyed && inProgress(pe):
		wait = max(wait, time.Second)
		v.Code = CodeInProgress
		return retryable(recoil.ClassTransient, "409 "+describe(pe, "the same idempotency key is still in progress"))
	case code == http.StatusBadRequest && !isJSON && len(body) > 0:
		ct := resp.Header.Get("Content-Type")
		if ct == "" {
			ct = "no content type"
		}
		return permanent(CodeNonJSON400, "400 with a non-JSON body ("+ct+"): likely an intermediary such as a proxy, not the payload")
	}
	// The rest is the status table every driver shares (recoil.StatusVerdict),
	// in the provider's words.
	base := recoil.StatusVerdict(code)
	fallback := http.StatusText(code)
	switch code {
	case http.StatusTooManyRequests:
		fallback = "rate limited"
	case http.StatusRequestTimeout:
		fallback = "request timeout"
	case http.StatusServiceUnavailable, 529:
		fallback = "overloaded"
	case http.StatusNotFound:
		fallback = "not found"
	}
	reason := status + " " + describe(pe, fallback)
	if !base.Class.Retryable() {
		switch {
		case code == http.StatusNotFound:
			reason += ": a retired model? fall back to another"
			return permanent(base.Code, reason)
		case code == http.StatusBadRequest && contextTooLong(pe):
			return permanent(CodeContextLength, reason)
		}
		return permanent(base.Code, reason)
	}
	return retryable(base.Class, reason)
}

// classifyError classifies a transport error (no response arrived).
func classifyError(req *http.Request, err error) recoil.Verdict {
	var (
		unknownAuth x509.UnknownAuthorityError
		hostname    x509.HostnameError
		invalid     x509.CertificateInvalidError
		verify      *tls.CertificateVerificationError
		dns         *net.DNSError
		op          *net.OpError
		alert       tls.AlertError
		record      tls.RecordHeaderError
	)
	switch {
	case errors.As(err, &verify), errors.As(err, &unknownAuth), errors.As(err, &hostname), errors.As(err, &invalid):
		return recoil.Verdict{Class: recoil.ClassPermanent, Code: CodeCertificate, Reason: "certificate refused: " + err.Error()}
	case req != nil && req.URL != nil && req.URL.Scheme != "http" && req.URL.Scheme != "https":
		return recoil.Verdict{Class: recoil.ClassPermanent, Code: CodeBadScheme, Reason: "unsupported scheme " + strconv.Quote(req.URL.Scheme)}
	case errors.As(err, &dns), errors.As(err, &op) && op.Op == "dial", errors.As(err, &alert), errors.As(err, &record):
		return recoil.Verdict{Class: recoil.ClassTransient, Code: CodeConnect, Reason: "could not connect, nothing was sent: " + err.Error()}
	case errors.Is(err, context.DeadlineExceeded):
		return recoil.Verdict{Class: recoil.ClassTransient, Timeout: true, MayHaveExecuted: true, Code: CodeConnectionLost, Reason: "attempt timed out"}
	}
	v := recoil.Verdict{Class: recoil.ClassTransient, MayHaveExecuted: true, Code: CodeConnectionLost, Reason: "connection failed after sending: " + err.Error()}
	var t interface{ Timeout() bool }
	if errors.As(err, &t) && t.Timeout() {
		v.Timeout = true
	}
	return v
}

// describe is "type: message" from a provider error, or fallback.
func describe(pe ProviderError, fallback string) string {
	switch {
	case pe.Type != "" && pe.Message != "":
		return pe.Type + ": " + pe.Message
	case pe.Message != "":
		return pe.Message
	case pe.Type != "":
		return pe.Type
	}
	return fallback
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// inProgress reports a 409 saying the same idempotency key is still being
// processed (Stripe's idempotency_key_in_use; "in progress" messages).
func inProgress(pe ProviderError) bool {
	for _, s := range [...]string{pe.Code, pe.Type, pe.Message} {
		l := strings.ToLower(s)
		if strings.Contains(l, "in progress") || strings.Contains(l, "in_progress") || strings.Contains(l, "in_use") {
			return true
		}
	}
	return false
}

// idempotencyHeaders are the headers that carry an idempotency key
// (net/http treats the same two as marking a request idempotent).
var idempotencyHeaders = [...]string{"Idempotency-Key", "X-Idempotency-Key"}

func hasIdempotencyKey(req *http.Request) bool {
	if req == nil {
		return false
	}
	for _, h := range idempotencyHeaders {
		if _, ok := req.Header[h]; ok {
			return true
		}
	}
	return false
}
