package recoilhttp

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"testing/iotest"
)

// source is an original response body that records how much was read from
// it and how often it was closed.
type source struct {
	r        io.Reader
	read     int
	closes   atomic.Int32 // the idle timer may close it
	closeErr error
}

func (s *source) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	s.read += n
	return n, err
}

func (s *source) Close() error {
	s.closes.Add(1)
	return s.closeErr
}

var errBoom = errors.New("boom")

func TestPeekBody(t *testing.T) {
	long := strings.Repeat("x", 1000)
	tests := []struct {
		name     string
		r        io.Reader
		cl       int64 // Content-Length; -1 unknown
		limit    int
		want     string // peeked
		wantErr  error
		wantRest string // what the restored body yields in all
		wantTail error  // the restored body's final error
	}{
		{"short body", strings.NewReader("abc"), -1, 10, "abc", nil, "abc", io.EOF},
		{"short body with length", strings.NewReader("abc"), 3, 10, "abc", nil, "abc", io.EOF},
		{"length understated", strings.NewReader(long), 3, 2000, long, nil, long, io.EOF},
		{"length overstated", strings.NewReader("abc"), 500, 2000, "abc", nil, "abc", io.EOF},
		{"exactly limit", strings.NewReader(long), -1, 1000, long, nil, long, io.EOF},
		{"exactly limit with length", strings.NewReader(long), 1000, 1000, long, nil, long, io.EOF},
		{"over limit", strings.NewReader(long), -1, 100, long[:100], nil, long, io.EOF},
		{"over limit with length", strings.NewReader(long), 1000, 100, long[:100], nil, long, io.EOF},
		{"limit beyond first buffer", strings.NewReader(long), -1, 700, long[:700], nil, long, io.EOF},
		{"empty body", strings.NewReader(""), -1, 10, "", nil, "", io.EOF},
		{"one byte at a time", iotest.OneByteReader(strings.NewReader(long)), -1, 100, long[:100], nil, long, io.EOF},
		{"data with EOF", iotest.DataErrReader(strings.NewReader("abc")), -1, 10, "abc", nil, "abc", io.EOF},
		{"error midway", io.MultiReader(strings.NewReader("abc"), iotest.ErrReader(errBoom)), -1, 10, "abc", errBoom, "abc", errBoom},
		{"error at once", iotest.ErrReader(errBoom), -1, 10, "", errBoom, "", errBoom},
		{"error after limit", io.MultiReader(strings.NewReader(long), iotest.ErrReader(errBoom)), -1, 10, long[:10], nil, long, errBoom},
		{"no progress", &stallReader{empty: 150, r: strings.NewReader("abc")}, -1, 10, "", io.ErrNoProgress, "abc", io.EOF},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := &source{r: tt.r}
			resp := &http.Response{Body: src, ContentLength: tt.cl}
			got, err := PeekBody(resp, tt.limit)
			if string(got) != tt.want || !errors.Is(err, tt.wantErr) || (err == nil) != (tt.wantErr == nil) {
				t.Fatalf("PeekBody = %q, %v, want %q, %v", got, err, tt.want, tt.wantErr)
			}
			if src.read > tt.limit {
				t.Errorf("PeekBody read %d bytes of the body, want at most %d", src.read, tt.limit)
			}
			if src.closes.Load() != 0 {
				t.Errorf("PeekBody closed the body %d times, want 0", src.closes.Load())
			}
			rest, err := readAllRepeat(resp.Body)
			if string(rest) != tt.wantRest || !errors.Is(err, tt.wantTail) {
				t.Errorf("restored body = %q, %v, want %q, %v", rest, err, tt.wantRest, tt.wantTail)
			}
		})
	}
}

// readAllRepeat reads r to its end like io.ReadAll, but returns the final
// error, io.EOF included, after checking that it repeats.
func readAllRepeat(r io.Reader) ([]byte, error) {
	var out []byte
	buf := make([]byte, 7)
	for {
		n, err := r.Read(buf)
		out = append(out, buf[:n]...)
		if err != nil {
			if n, again := r.Read(buf); n != 0 || !errors.Is(again, err) {
				return out, fmt.Errorf("read after %v = %d, %v", err, n, again)
			}
			return out, err
		}
	}
}

// stallReader returns (0, nil) empty times, then reads r.
type stallReader struct {
	empty int
	r     io.Reader
}

func (s *stallReader) Read(p []byte) (int, error) {
	if s.empty > 0 {
		s.empty--
		return 0, nil
	}
	return s.r.Read(p)
}

func TestPeekBodyNothingToRead(t *testing.T) {
	if got, err := PeekBody(nil, 10); got != nil || err != nil {
		t.Errorf("PeekBody(nil, 10) = %q, %v, want nil, nil", got, err)
	}
	for _, body := range []io.ReadCloser{nil, http.NoBody} {
		resp := &http.Response{Body: body}
		if got, err := PeekBody(resp, 10); got != nil || err != nil || resp.Body != body {
			t.Errorf("PeekBody(%v, 10) = %q, %v, body %v, want nil, nil, unchanged", body, got, err, resp.Body)
		}
	}
	for _, limit := range []int{0, -1} {
		src := &source{r: strings.NewReader("abc")}
		resp := &http.Response{Body: src}
		if got, err := PeekBody(resp, limit); got != nil || err != nil || resp.Body != io.ReadCloser(src) || src.read != 0 {
			t.Errorf("PeekBody(limit %d) = %q, %v, read %d, want nil, nil, nothing read, body unchanged", limit, got, err, src.read)
		}
	}
}

func TestPeekBodyClose(t *testing.T) {
	for _, limit := range []int{2, 100} { // the rest pending, and the body read to its end
		src := &source{r: strings.NewReader("abcdef"), closeErr: errBoom}
		resp := &http.Response{Body: src}
		if _, err := PeekBody(resp, limit); err != nil {
			t.Fatalf("PeekBody(limit %d) = %v", limit, err)
		}
		if err := resp.Body.Close(); !errors.Is(err, errBoom) {
			t.Errorf("restored body Close() = %v, want the original's %v", err, errBoom)
		}
		if src.closes.Load() != 1 {
			t.Errorf("original closed %d times, want 1", src.closes.Load())
		}
	}
}

// Peeking twice sees the same bytes and leaves the stream whole.
func TestPeekBodyTwice(t *testing.T) {
	resp := &http.Response{Body: io.NopCloser(strings.NewReader("hello, world"))}
	a, _ := PeekBody(resp, 5)
	b, _ := PeekBody(resp, 8)
	rest, _ := io.ReadAll(resp.Body)
	if string(a) != "hello" || string(b) != "hello, w" || string(rest) != "hello, world" {
		t.Errorf("PeekBody twice = %q, %q, rest %q, want %q, %q, %q", a, b, rest, "hello", "hello, w", "hello, world")
	}
}

// Real and real-looking provider bodies.
const (
	anthropicValidator400 = `{"type":"error","error":{"type":"invalid_request_error","message":"tools.0.custom.input_schema: JSON schema is invalid. It must match JSON Schema draft 2020-12 (https://json-schema.org/draft/2020-12). Learn more about tool use at https://docs.claude.com/en/docs/tool-use."},"request_id":"req_011CSHoEeqs5C35K2UUqR7Fy"}`
	openAIValidator400    = `{
  "error": {
    "message": "Invalid schema for function 'get_weather': In context=(), 'additionalProperties' is required to be supplied and to be false.",
    "type": "invalid_request_error",
    "param": "tools[0].function.parameters",
    "code": "invalid_function_parameters"
  }
}`
	openAIUnknownArg400  = `{"error":{"message":"Unrecognized request argument supplied: foo","type":"invalid_request_error","param":null,"code":null}}`
	anthropicRateLimit   = `{"type":"error","error":{"type":"rate_limit_error","message":"This request would exceed the rate limit for your organization (a22cf6e6-a940-4fff-8c4c-1580816ac7be) of 20,000 input tokens per minute. For details, refer to: https://docs.anthropic.com/en/api/rate-limits. You can see the response headers for current usage. Please reduce the prompt length or the maximum tokens requested, or try again later."},"request_id":"req_011CZAau32QzxDkriovTaFCB"}`
	openAIRateLimit      = `{"error":{"message":"Rate limit reached for gpt-4o in organization org-abc123 on requests per min (RPM): Limit 500, Used 500, Requested 1. Please try again in 120ms. Visit https://platform.openai.com/account/rate-limits to learn more.","type":"requests","param":null,"code":"rate_limit_exceeded"}}`
	openAIQuota          = `{"error":{"message":"You exceeded your current quota, please check your plan and billing details. For more information on this error, read the docs: https://platform.openai.com/docs/guides/error-codes/api-errors.","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}`
	openAIQuotaNullCode  = `{"error":{"message":"You exceeded your current quota, please check your plan and billing details.","type":"insufficient_quota","param":null,"code":null}}`
	openAICredit         = `{"error":{"message":"Your prepaid credit balance is exhausted.","type":"insufficient_quota","param":null,"code":"credit_balance_exhausted"}}`
	openAITooLarge       = `{"error":{"message":"Request too large for gpt-4o in organization org-abc123 on tokens per min (TPM): Limit 30000, Requested 45000. The input or output tokens must be reduced in order to run successfully. Visit https://platform.openai.com/account/rate-limits to learn more.","type":"tokens","param":null,"code":"rate_limit_exceeded"}}`
	anthropicOverloaded  = `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"},"request_id":"req_01RCc7MbLyQNtGKzBTv8VCep"}`
	anthropicBilling     = `{"type":"error","error":{"type":"billing_error","message":"Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits."}}`
	anthropicTooLarge    = `{"type":"error","error":{"type":"request_too_large","message":"Request exceeds the maximum allowed number of bytes."}}`
	anthropicAPIError    = `{"type":"error","error":{"type":"api_error","message":"Internal server error"},"request_id":"req_018EeWyXxfu5pfWkrYcMdjWG"}`
	responsesStreamError = `{"type":"error","code":"rate_limit_exceeded","message":"Rate limit reached.","param":null,"sequence_number":3}`
	googleArray          = `[{"error":{"code":429,"message":"Resource has been exhausted (e.g. check quota).","status":"RESOURCE_EXHAUSTED"}}]`
	proxyHTML400         = "<html>\r\n<head><title>400 Bad Request</title></head>\r\n<body>\r\n<center><h1>400 Bad Request</h1></center>\r\n<hr><center>cloudflare</center>\r\n</body>\r\n</html>\r\n"
	truncatedQuota       = `{"error":{"message":"You exceeded your current quota, please check your plan and billing det`
)

func TestParseErrorBody(t *testing.T) {
	tests := []struct {
		name       string
		body       string
		want       ProviderError
		wantJSON   bool
		wantOK     bool
		wantQuota  bool
		wantPrefix bool // want.Message is a prefix of the message
	}{
		{"anthropic validator 400", anthropicValidator400, ProviderError{Type: "invalid_request_error", Message: "tools.0.custom.input_schema: JSON schema is invalid."}, true, true, false, true},
		{"openai validator 400", openAIValidator400, ProviderError{Type: "invalid_request_error", Code: "invalid_function_parameters", Param: "tools[0].function.parameters", Message: "Invalid schema for function 'get_weather'"}, true, true, false, true},
		{"openai unknown argument", openAIUnknownArg400, ProviderError{Type: "invalid_request_error", Message: "Unrecognized request argument supplied: foo"}, true, true, false, false},
		{"anthropic 429", anthropicRateLimit, ProviderError{Type: "rate_limit_error", Message: "This request would exceed the rate limit"}, true, true, false, true},
		{"openai 429", openAIRateLimit, ProviderError{Type: "requests", Code: "rate_limit_exceeded", Message: "Rate limit reached for gpt-4o"}, true, true, false, true},
		{"openai insufficient_quota", openAIQuota, ProviderError{Type: "insufficient_quota", Code: "insufficient_quota", Message: "You exceeded your current quota"}, true, true, true, true},
		{"openai insufficient_quota, null code", openAIQuotaNullCode, ProviderError{Type: "insufficient_quota", Message: "You exceeded your current quota"}, true, true, true, true},
		{"openai credit exhausted", openAICredit, ProviderError{Type: "insufficient_quota", Code: "credit_balance_exhausted", Message: "Your prepaid credit balance is exhausted."}, true, true, true, false},
		{"openai request too large", openAITooLarge, ProviderError{Type: "tokens", Code: "rate_limit_exceeded", Message: "Request too large for gpt-4o"}, true, true, true, true},
		{"anthropic 529", anthropicOverloaded, ProviderError{Type: "overloaded_error", Message: "Overloaded"}, true, true, false, false},
		{"anthropic billing", anthropicBilling, ProviderError{Type: "billing_error", Message: "Your credit balance is too low"}, true, true, true, true},
		{"anthropic 413", anthropicTooLarge, ProviderError{Type: "request_too_large", Message: "Request exceeds the maximum allowed number of bytes."}, true, true, true, false},
		{"anthropic 500", anthropicAPIError, ProviderError{Type: "api_error", Message: "Internal server error"}, true, true, false, false},
		{"responses stream error", responsesStreamError, ProviderError{Type: "error", Code: "rate_limit_exceeded", Message: "Rate limit reached."}, true, true, false, false},
		{"google array", googleArray, ProviderError{Type: "RESOURCE_EXHAUSTED", Code: "429", Message: "Resource has been exhausted"}, true, true, false, true},
		{"bare error string", `{"error":"upstream connect error"}`, ProviderError{Message: "upstream connect error"}, true, true, false, false},
		{"bare message", `{"message":"Internal server error"}`, ProviderError{Message: "Internal server error"}, true, true, false, false},
		{"escaped message", `{"error":{"message":"quote \" and \u00e9"}}`, ProviderError{Message: "quote \" and é"}, true, true, false, false},
		{"proxy HTML 400", proxyHTML400, ProviderError{}, false, false, false, false},
		{"truncated JSON", truncatedQuota, ProviderError{}, false, false, false, false},
		{"plain text", "Bad Gateway", ProviderError{}, false, false, false, false},
		{"empty", "", ProviderError{}, false, false, false, false},
		{"whitespace", " \r\n", ProviderError{}, false, false, false, false},
		{"JSON without error", `{"id":"chatcmpl-1","object":"chat.completion"}`, ProviderError{}, true, false, false, false},
		{"null error", `{"error":null}`, ProviderError{}, true, false, false, false},
		{"empty error object", `{"error":{}}`, ProviderError{}, true, false, false, false},
		{"error of another type", `{"error":[1,2]}`, ProviderError{}, true, false, false, false},
		{"top-level type alone", `{"type":"error"}`, ProviderError{}, true, false, false, false},
		{"JSON string", `"oops"`, ProviderError{}, true, false, false, false},
		{"JSON number", `42`, ProviderError{}, true, false, false, false},
		{"JSON null", `null`, ProviderError{}, true, false, false, false},
		{"empty array", `[]`, ProviderError{}, true, false, false, false},
		{"array of strings", `["oops"]`, ProviderError{}, true, false, false, false},
		{"numeric and boolean fields", `{"error":{"code":-3,"type":true,"param":{"a":1},"message":"m"}}`, ProviderError{Type: "true", Code: "-3", Message: "m"}, true, true, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, isJSON, ok := ParseErrorBody([]byte(tt.body))
			match := got == tt.want
			if tt.wantPrefix {
				g, w := got, tt.want
				g.Message, w.Message = "", ""
				match = g == w && strings.HasPrefix(got.Message, tt.want.Message)
			}
			if !match || isJSON != tt.wantJSON || ok != tt.wantOK {
				t.Errorf("ParseErrorBody(%.40q) = %+v, %t, %t, want %+v, %t, %t", tt.body, got, isJSON, ok, tt.want, tt.wantJSON, tt.wantOK)
			}
			if q := got.QuotaExhausted(); q != tt.wantQuota {
				t.Errorf("ParseErrorBody(%.40q).QuotaExhausted() = %t, want %t", tt.body, q, tt.wantQuota)
			}
		})
	}
}

func TestQuotaExhausted(t *testing.T) {
	tests := []struct {
		pe   ProviderError
		want bool
	}{
		{ProviderError{}, false},
		{ProviderError{Type: "insufficient_quota"}, true},
		{ProviderError{Code: "insufficient_quota"}, true},
		{ProviderError{Code: "INSUFFICIENT_QUOTA"}, true},
		{ProviderError{Code: "credit_balance_exhausted"}, true},
		{ProviderError{Type: "billing_error"}, true},
		{ProviderError{Type: "request_too_large"}, true},
		{ProviderError{Message: "Request too large for gpt-4o on tokens per min (TPM)"}, true},
		{ProviderError{Message: "request too large"}, true},
		{ProviderError{Message: "The REQUEST TOO LARGE"}, true},
		{ProviderError{Type: "rate_limit_error", Message: "This request would exceed the rate limit"}, false},
		{ProviderError{Type: "tokens", Code: "rate_limit_exceeded", Message: "Rate limit reached for gpt-4o"}, false},
		{ProviderError{Type: "overloaded_error", Message: "Overloaded"}, false},
		{ProviderError{Type: "insufficient_quota_x"}, false},
		{ProviderError{Message: "request too larg"}, false},
		{ProviderError{Message: "quota"}, false},
	}
	for _, tt := range tests {
		if got := tt.pe.QuotaExhausted(); got != tt.want {
			t.Errorf("%+v.QuotaExhausted() = %t, want %t", tt.pe, got, tt.want)
		}
	}
}

func FuzzParseErrorBody(f *testing.F) {
	for _, body := range []string{anthropicValidator400, openAIQuota, proxyHTML400, truncatedQuota, googleArray, `{"error":"x"}`} {
		f.Add([]byte(body))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		orig := bytes.Clone(body)
		pe, isJSON, ok := ParseErrorBody(body)
		if !bytes.Equal(body, orig) {
			t.Fatalf("ParseErrorBody modified its input")
		}
		if ok && !isJSON {
			t.Fatalf("ParseErrorBody(%q) = %+v, ok without JSON", body, pe)
		}
		if ok != (pe.Type != "" || pe.Code != "" || pe.Message != "") {
			t.Fatalf("ParseErrorBody(%q) = %+v, ok %t", body, pe, ok)
		}
		if !ok && pe != (ProviderError{}) {
			t.Fatalf("ParseErrorBody(%q) = %+v, not ok, want the zero ProviderError", body, pe)
		}
		pe.QuotaExhausted()
		// Peeking the same bytes restores them exactly.
		resp := &http.Response{Body: io.NopCloser(iotest.HalfReader(bytes.NewReader(body))), ContentLength: -1}
		limit := len(body)/2 + 1
		peeked, err := PeekBody(resp, limit)
		if err != nil || !bytes.Equal(peeked, body[:min(limit, len(body))]) {
			t.Fatalf("PeekBody(%d) = %q, %v, want %q", limit, peeked, err, body[:min(limit, len(body))])
		}
		if all, err := io.ReadAll(resp.Body); err != nil || !bytes.Equal(all, body) {
			t.Fatalf("restored body = %q, %v, want %q", all, err, body)
		}
	})
}

func BenchmarkPeekBody(b *testing.B) {
	benchmarks := []struct {
		name string
		body []byte
		cl   int64
	}{
		{"ErrorBody", []byte(openAIQuota), -1},
		{"ErrorBodyWithLength", []byte(openAIQuota), int64(len(openAIQuota))},
		{"Large", bytes.Repeat([]byte("<p>proxy</p>"), 100<<10), -1},
	}
	for _, bm := range benchmarks {
		b.Run(bm.name, func(b *testing.B) {
			b.ReportAllocs()
			r := bytes.NewReader(bm.body)
			body := io.NopCloser(r)
			resp := &http.Response{ContentLength: bm.cl}
			for b.Loop() {
				r.Reset(bm.body)
				resp.Body = body
				if _, err := PeekBody(resp, MaxErrorBody); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
