package recoilhttp_test

import (
	"bytes"
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/recoil-go/recoil"
	"github.com/recoil-go/recoil/recoilhttp"
)

var now = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

// response builds a response with a status, headers as "Name: value" pairs
// and a body.
func response(status int, body string, headers ...string) *http.Response {
	h := http.Header{}
	for _, kv := range headers {
		k, v, _ := strings.Cut(kv, ": ")
		h.Add(k, v)
	}
	return &http.Response{StatusCode: status, Header: h, Body: io.NopCloser(strings.NewReader(body)), ContentLength: int64(len(body))}
}

const (
	anthropic400 = `{"type":"error","error":{"type":"invalid_request_error","message":"tools.0.input_schema: unknown field \"strict\""}}`
	openaiQuota  = `{"error":{"message":"You exceeded your current quota","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}`
	tooLarge     = `{"error":{"message":"Request too large for gpt-4o in organization org-x on tokens per min (TPM): Limit 30000, Requested 50000.","type":"tokens","param":null,"code":"rate_limit_exceeded"}}`
	rateLimited  = `{"type":"error","error":{"type":"rate_limit_error","message":"Number of requests has exceeded your rate limit"}}`
	overloaded   = `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`
	htmlPage     = `<html><body><h1>400 Bad Request</h1>Request Header Or Cookie Too Large</body></html>`
)

func TestClassifyStatus(t *testing.T) {
	post, _ := http.NewRequest("POST", "https://api.example.com/v1/messages", nil)
	keyed, _ := http.NewRequest("POST", "https://api.example.com/v1/messages", nil)
	keyed.Header.Set("Idempotency-Key", "k1")
	tests := []struct {
		name     string
		req      *http.Request
		resp     *http.Response
		class    recoil.Class
		wait     time.Duration
		code     string
		inReason string
	}{
		{"200 is a success", post, response(200, "{}"), recoil.ClassUnknown, 0, "", ""},
		{"304 is not a failure", post, response(304, ""), recoil.ClassUnknown, 0, "", ""},
		{"400 validator", post, response(400, anthropic400), recoil.ClassPermanent, 0, "invalid_request_error", `unknown field "strict"`},
		{"400 prompt too long (Anthropic)", post, response(400, `{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 208310 tokens > 200000 maximum"}}`), recoil.ClassPermanent, 0, recoilhttp.CodeContextLength, "prompt is too long"},
		{"400 context length (OpenAI)", post, response(400, `{"error":{"message":"This model's maximum context length is 128000 tokens.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`), recoil.ClassPermanent, 0, recoilhttp.CodeContextLength, "maximum context length"},
		{"400 HTML from a proxy", post, response(400, htmlPage, "Content-Type: text/html"), recoil.ClassPermanent, 0, recoilhttp.CodeNonJSON400, "non-JSON body (text/html)"},
		{"401", post, response(401, `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}`), recoil.ClassPermanent, 0, "unauthorized", "invalid x-api-key"},
		{"402", post, response(402, ""), recoil.ClassPermanent, 0, "payment_required", "402"},
		{"403", post, response(403, ""), recoil.ClassPermanent, 0, "forbidden", "403"},
		{"404 marks a fallback", post, response(404, `{"type":"error","error":{"type":"not_found_error","message":"model: claude-2.0"}}`), recoil.ClassPermanent, 0, recoilhttp.CodeNotFound, "fall back"},
		{"413", post, response(413, ""), recoil.ClassPermanent, 0, "too_large", "413"},
		{"422", post, response(422, ""), recoil.ClassPermanent, 0, "", "422"},
		{"405 and other 4xx", post, response(405, ""), recoil.ClassPermanent, 0, "", "405"},
		{"429 throttled with Retry-After", post, response(429, rateLimited, "Retry-After: 7"), recoil.ClassThrottled, 7 * time.Second, "rate_limit_error", "rate limit"},
		{"429 retry-after-ms first", post, response(429, rateLimited, "Retry-After: 7", "retry-after-ms: 1500"), recoil.ClassThrottled, 1500 * time.Millisecond, "rate_limit_error", ""},
		{"429 insufficient_quota is permanent", post, response(429, openaiQuota, "Retry-After: 1"), recoil.ClassPermanent, 0, "insufficient_quota", "waiting will not refill"},
		{"429 credit balance is permanent", post, response(429, `{"type":"error","error":{"type":"credit_balance_exhausted","message":"Your credit balance is too low"}}`), recoil.ClassPermanent, 0, "credit_balance_exhausted", ""},
		{"429 billing_error is permanent", post, response(429, `{"type":"error","error":{"type":"billing_error","message":"billing"}}`), recoil.ClassPermanent, 0, "billing_error", ""},
		{"429 request too large is permanent", post, response(429, tooLarge), recoil.ClassPermanent, 0, "rate_limit_exceeded", "Request too large"},
		{"408", post, response(408, ""), recoil.ClassTransient, 0, "", "408"},
		{"409 in progress with a key", keyed, response(409, `{"error":{"type":"idempotency_error","message":"A request with this key is in progress"}}`), recoil.ClassTransient, time.Second, recoilhttp.CodeInProgress, "in progress"},
		{"409 in progress keeps a longer wait", keyed, response(409, `{"error":{"code":"idempotency_key_in_use"}}`, "Retry-After: 3"), recoil.ClassTransient, 3 * time.Second, recoilhttp.CodeInProgress, ""},
		{"409 without a key", post, response(409, `{"error":{"message":"in progress"}}`), recoil.ClassPermanent, 0, "", "409"},
		{"500", post, response(500, `{"type":"error","error":{"type":"api_error","message":"Internal server error"}}`), recoil.ClassTransient, 0, "api_error", "Internal server error"},
		{"502", post, response(502, htmlPage), recoil.ClassTransient, 0, "", "502"},
		{"503 overloaded", post, response(503, "", "Retry-After: 2"), recoil.ClassOverloaded, 2 * time.Second, "", "503"},
		{"504", post, response(504, ""), recoil.ClassTransient, 0, "", "504"},
		{"529 overloaded", post, response(529, overloaded), recoil.ClassOverloaded, 0, "overloaded_error", "Overloaded"},
		{"599", post, response(599, ""), recoil.ClassTransient, 0, "", "599"},
		{"501 is permanent", post, response(501, ""), recoil.ClassPermanent, 0, "", "501"},
		{"505 is permanent", post, response(505, ""), recoil.ClassPermanent, 0, "", "505"},
		{"x-should-retry true overrides 400", post, response(400, anthropic400, "x-should-retry: true"), recoil.ClassTransient, 0, "invalid_request_error", "x-should-retry: true"},
		{"x-should-retry true keeps 529 overloaded", post, response(529, overloaded, "x-should-retry: true", "retry-after: 4"), recoil.ClassOverloaded, 4 * time.Second, "overloaded_error", ""},
		{"x-should-retry false overrides 503", post, response(503, "", "X-Should-Retry: false"), recoil.ClassPermanent, 0, recoilhttp.CodeDoNotRetry, "x-should-retry: false"},
		{"x-should-retry true overrides a quota body", post, response(429, openaiQuota, "x-should-retry: true"), recoil.ClassThrottled, 0, "insufficient_quota", ""},
		{"Recoil-Retry: no", post, response(503, "", "Recoil-Retry: no"), recoil.ClassPermanent, 0, recoilhttp.CodeDoNotRetry, "Recoil-Retry: no"},
		{"hostile Retry-After is absent", post, response(503, "", "Retry-After: -5"), recoil.ClassOverloaded, 0, "", ""},
		{"Retry-After as an HTTP date", post, response(429, "", "Retry-After: "+now.Add(90*time.Second).Format(http.TimeFormat)), recoil.ClassThrottled, 90 * time.Second, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			orig, _ := io.ReadAll(tt.resp.Body)
			tt.resp.Body = io.NopCloser(bytes.NewReader(orig))
			v := recoilhttp.Classify(tt.req, tt.resp, nil, now)
			if v.Class != tt.class || v.Wait != tt.wait || v.Code != tt.code {
				t.Errorf("Classify() = %+v, want class %v wait %v code %q", v, tt.class, tt.wait, tt.code)
			}
			if !strings.Contains(v.Reason, tt.inReason) {
				t.Errorf("Reason = %q, want it to contain %q", v.Reason, tt.inReason)
			}
			// The body is restored for the caller, whole.
			if got, _ := io.ReadAll(tt.resp.Body); !bytes.Equal(got, orig) {
				t.Errorf("body after Classify = %q, want %q", got, orig)
			}
		})
	}
}

type timeoutErr struct{}

func (timeoutErr) Error() string   { return "net/http: timeout awaiting response headers" }
func (timeoutErr) Timeout() bool   { return true }
func (timeoutErr) Temporary() bool { return true }

func TestClassifyError(t *testing.T) {
	get, _ := http.NewRequest("GET", "https://api.example.com/v1/models", nil)
	ftp, _ := http.NewRequest("GET", "ftp://example.com/x", nil)
	tests := []struct {
		name     string
		req      *http.Request
		err      error
		class    recoil.Class
		code     string
		executed bool
		timeout  bool
	}{
		{"dial refused", get, &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connection refused")}, recoil.ClassTransient, recoilhttp.CodeConnect, false, false},
		{"DNS", get, &net.DNSError{Err: "no such host", Name: "api.example.com"}, recoil.ClassTransient, recoilhttp.CodeConnect, false, false},
		{"unknown authority", get, fmt.Errorf("tls: %w", x509.UnknownAuthorityError{}), recoil.ClassPermanent, recoilhttp.CodeCertificate, false, false},
		{"hostname mismatch", get, x509.HostnameError{Certificate: &x509.Certificate{}, Host: "x"}, recoil.ClassPermanent, recoilhttp.CodeCertificate, false, false},
		{"bad scheme", ftp, errors.New(`unsupported protocol scheme "ftp"`), recoil.ClassPermanent, recoilhttp.CodeBadScheme, false, false},
		{"reset after writing", get, &net.OpError{Op: "read", Net: "tcp", Err: errors.New("connection reset by peer")}, recoil.ClassTransient, recoilhttp.CodeConnectionLost, true, false},
		{"EOF", get, io.EOF, recoil.ClassTransient, recoilhttp.CodeConnectionLost, true, false},
		{"header timeout", get, timeoutErr{}, recoil.ClassTransient, recoilhttp.CodeConnectionLost, true, true},
		{"attempt deadline", get, context.DeadlineExceeded, recoil.ClassTransient, recoilhttp.CodeConnectionLost, true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := recoilhttp.Classify(tt.req, nil, tt.err, now)
			if v.Class != tt.class || v.Code != tt.code || v.MayHaveExecuted != tt.executed || v.Timeout != tt.timeout {
				t.Errorf("Classify(%v) = %+v, want class %v code %q executed %v timeout %v", tt.err, v, tt.class, tt.code, tt.executed, tt.timeout)
			}
		})
	}
}

func TestIdempotentMethod(t *testing.T) {
	for m, want := range map[string]bool{
		"": true, "GET": true, "HEAD": true, "OPTIONS": true, "TRACE": true, "PUT": true, "DELETE": true,
		"POST": false, "PATCH": false, "CONNECT": false, "get": false,
	} {
		if got := recoilhttp.IdempotentMethod(m); got != want {
			t.Errorf("IdempotentMethod(%q) = %v, want %v", m, got, want)
		}
	}
}
