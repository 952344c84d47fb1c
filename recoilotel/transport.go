package recoilotel

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"sync/atomic"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/recoil-go/recoil/hop"
	"github.com/recoil-go/recoil/recoilhttp"
	"github.com/recoil-go/recoil/recoilotel/internal/config"
)

// Attribute keys of the HTTP semantic conventions (stable since semconv
// v1.23) that attempt spans carry.
const (
	MethodKey         = attribute.Key("http.request.method")
	MethodOriginalKey = attribute.Key("http.request.method_original")
	URLFullKey        = attribute.Key("url.full")
	ServerAddressKey  = attribute.Key("server.address")
	ServerPortKey     = attribute.Key("server.port")
	StatusCodeKey     = attribute.Key("http.response.status_code")
	ResendCountKey    = attribute.Key("http.request.resend_count")
	ErrorTypeKey      = attribute.Key("error.type")
)

// Transport is an http.RoundTripper that traces each attempt of a
// recoilhttp.Transport as one CLIENT span under the caller's span, with the
// HTTP semantic conventions: http.request.method, url.full (credentials and
// signing or key parameters redacted), server.address, server.port,
// http.response.status_code, error.type on failure, and
// http.request.resend_count on resends — 1 on the second attempt, 2 on the
// third; absent on the first, which is not a resend. The span is the
// attempt request's context, so a RoundTripper below sees it, and the
// propagator (WithPropagators) writes it into the request's headers for the
// server. It covers the attempt until its response headers arrive, as the
// Transport's AttemptTimeout does: the body is the caller's to read.
//
// The waits between attempts and a call's giving up are events on the
// caller's span, added by the policy's hooks (Observer.OnAttempt and
// Observe), not by Transport.
//
// Create it with NewTransport; the zero Transport is not usable. It is safe
// for concurrent use.
type Transport struct {
	retry http.RoundTripper
}

// NewTransport returns t traced: it sets t.Base to a layer that makes the
// attempt spans (around the Base t had, http.DefaultTransport if nil), and
// returns the RoundTripper to use in t's place, which numbers each
// request's attempts for that layer. Call it before t is first used. The
// tracer provider and propagator come from opts (the global ones by
// default).
func NewTransport(t *recoilhttp.Transport, opts ...Option) *Transport {
	base := t.Base
	if base == nil {
		base = http.DefaultTransport
	}
	t.Base = &attempts{base: base, spans: config.New(opts).Attempts()}
	return &Transport{retry: t}
}

// RoundTrip implements http.RoundTripper: it runs the recoilhttp Transport
// with a context that numbers the request's attempts.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	return t.retry.RoundTrip(req.WithContext(&logical{Context: req.Context()}))
}

// logical is one logical request's context: the caller's, with the count
// of the attempts made so far and the attributes they share. Attempts are
// sequential, made by the goroutine of the caller's RoundTrip.
type logical struct {
	context.Context
	n     atomic.Int32
	attrs []attribute.KeyValue
}

type logicalKey struct{}

func (l *logical) Value(key any) any {
	if key == (logicalKey{}) {
		return l
	}
	return l.Context.Value(key)
}

// attempts is the layer below the retry loop: one span per attempt.
type attempts struct {
	base  http.RoundTripper
	spans *config.Attempts
}

func (a *attempts) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	var attrs []attribute.KeyValue
	n := 0
	if l, ok := ctx.Value(logicalKey{}).(*logical); ok {
		n = int(l.n.Add(1))
		if l.attrs == nil {
			l.attrs = requestAttrs(req)
		}
		attrs = l.attrs
	} else {
		// Not through Transport: the hop header numbers the attempt when
		// the recoilhttp Transport sends it (its Hop field).
		if h, err := hop.ParseRequest(req.Header); err == nil {
			n = h.Attempt
		}
		attrs = requestAttrs(req)
	}
	name := attrs[0].Value.AsString()
	if name == "_OTHER" {
		name = "HTTP"
	}
	if n > 1 {
		// Within the slice's spare capacity: no allocation after the first.
		attrs = append(attrs, ResendCountKey.Int(n-1))
	}
	ctx, span := a.spans.Start(ctx, name, attrs...)
	out := req.WithContext(ctx)
	if a.spans.Injects() {
		out.Header = req.Header.Clone()
		if out.Header == nil {
			out.Header = http.Header{}
		}
		a.spans.Inject(ctx, propagation.HeaderCarrier(out.Header))
	}
	resp, err := a.base.RoundTrip(out)
	if span.IsRecording() {
		end(span, resp, err)
	}
	span.End()
	return resp, err
}

// end records the attempt's outcome on its span.
func end(span trace.Span, resp *http.Response, err error) {
	switch {
	case err != nil:
		span.SetAttributes(ErrorTypeKey.String(errorType(err)))
		span.SetStatus(codes.Error, err.Error())
	case resp == nil: // a RoundTripper breaking its contract; the client will say so
		span.SetStatus(codes.Error, "no response and no error")
	case resp.StatusCode >= 400:
		span.SetAttributes(StatusCodeKey.Int(resp.StatusCode), ErrorTypeKey.String(strconv.Itoa(resp.StatusCode)))
		span.SetStatus(codes.Error, "")
	default:
		span.SetAttributes(StatusCodeKey.Int(resp.StatusCode))
	}
}

// requestAttrs are the attributes every attempt of req carries, the method
// first.
func requestAttrs(req *http.Request) []attribute.KeyValue {
	attrs := make([]attribute.KeyValue, 0, 6) // room for a resend count
	method := req.Method
	if method == "" {
		method = http.MethodGet
	}
	if knownMethod(method) {
		attrs = append(attrs, MethodKey.String(method))
	} else {
		attrs = append(attrs, MethodKey.String("_OTHER"), MethodOriginalKey.String(method))
	}
	u := req.URL
	if u == nil {
		return attrs
	}
	attrs = append(attrs, URLFullKey.String(RedactURL(u)))
	if host := u.Hostname(); host != "" {
		attrs = append(attrs, ServerAddressKey.String(host))
		if port := portOf(u); port > 0 {
			attrs = append(attrs, ServerPortKey.Int(port))
		}
	}
	return attrs
}

func knownMethod(m string) bool {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodConnect, http.MethodOptions, http.MethodTrace:
		return true
	}
	return false
}

func portOf(u *url.URL) int {
	if p := u.Port(); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n <= 0 || n > 65535 {
			return 0
		}
		return n
	}
	switch strings.ToLower(u.Scheme) {
	case "https":
		return 443
	case "http":
		return 80
	}
	return 0
}

// errorType is error.type for an attempt that got no response: "timeout"
// or "canceled" for a context's, otherwise the error's Go type below the
// url.Error a client wraps it in.
func errorType(err error) string {
	var ne net.Error
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	case errors.Is(err, context.Canceled):
		return "canceled"
	case errors.As(err, &ne) && ne.Timeout():
		return "timeout"
	}
	var ue *url.Error
	if errors.As(err, &ue) && ue.Err != nil {
		err = ue.Err
	}
	switch t := reflect.TypeOf(err).String(); t {
	case "*errors.errorString", "*fmt.wrapError", "*errors.joinError":
		return "_OTHER" // says nothing a dashboard could group by
	default:
		return t
	}
}

// redactedParams are query parameters whose values url.full does not
// carry: the semantic conventions' list (signed URLs) and the usual names
// of API keys and tokens.
var redactedParams = map[string]bool{
	"awsaccesskeyid": true, "signature": true, "sig": true, "x-goog-signature": true,
	"key": true, "api_key": true, "apikey": true, "api-key": true, "access_token": true,
	"token": true, "client_secret": true, "password": true, "x-amz-signature": true,
	"x-amz-credential": true, "x-amz-security-token": true,
}

// RedactURL returns u as url.full should carry it: user and password
// replaced by REDACTED (as the HTTP semantic conventions ask), and the
// values of signing, key and token query parameters (key, api_key,
// access_token, Signature, X-Goog-Signature, …) replaced by REDACTED. The
// rest of the query is kept as it was sent.
func RedactURL(u *url.URL) string {
	c := *u
	if c.User != nil {
		c.User = url.UserPassword("REDACTED", "REDACTED")
	}
	if c.RawQuery != "" {
		c.RawQuery = redactQuery(c.RawQuery)
	}
	return c.String()
}

func redactQuery(q string) string {
	var b strings.Builder
	changed := false
	for i, part := range strings.Split(q, "&") {
		if i > 0 {
			b.WriteByte('&')
		}
		key, _, hasValue := strings.Cut(part, "=")
		name, err := url.QueryUnescape(key)
		if err != nil {
			name = key
		}
		if hasValue && redactedParams[strings.ToLower(name)] {
			b.WriteString(key)
			b.WriteString("=REDACTED")
			changed = true
			continue
		}
		b.WriteString(part)
	}
	if !changed {
		return q
	}
	return b.String()
}
