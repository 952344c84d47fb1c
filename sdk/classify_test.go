package recoilsdk_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"testing/synctest"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"
	aoption "github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/openai/openai-go/v3"

	"github.com/recoil-go/recoil"
	"github.com/recoil-go/recoil/backoff"
	"github.com/recoil-go/recoil/recoilhttp"
	recoilsdk "github.com/recoil-go/recoil/sdk"
)

// now is the instant the status table is classified at: midnight UTC on
// 2000-01-01, where a synctest bubble's clock starts, so that an HTTP-date
// Retry-After means the same wait inside a bubble and out of one.
var now = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// maxAttempts is the attempts recoil.Do makes of a retryable failure here.
const maxAttempts = 3

// statusCase is one answer of the fake provider and the verdict wanted for it.
type statusCase struct {
	name   string
	status int
	header map[string]string
	// body is the error body the provider sends, in its own shape.
	body  func(p provider) string
	class recoil.Class
	wait  time.Duration // Verdict.Wait
	code  string        // Verdict.Code, where it does not depend on the provider
}

// errorBody is an error body in each provider's shape.
func errorBody(typ, message, code string) func(provider) string {
	return func(p provider) string { return p.shape(typ, message, code) }
}

// sameBody is one body for every provider, such as a proxy's page.
func sameBody(body string) func(provider) string {
	return func(provider) string { return body }
}

// quotaBody is the provider's 429 for an account out of money.
func quotaBody(p provider) string { return p.quota }

// statusCases is the HTTP status table, as the SDKs' callers meet it.
var statusCases = []statusCase{
	{name: "400 invalid_request_error", status: 400, body: errorBody("invalid_request_error", `tools.0.input_schema: unknown field "strict"`, ""), class: recoil.ClassPermanent},
	{name: "400 from a proxy, not JSON", status: 400, header: map[string]string{"Content-Type": "text/html"}, body: sameBody("<html><body>400 Bad Request</body></html>"), class: recoil.ClassPermanent, code: recoilhttp.CodeNonJSON400},
	{name: "400 with x-should-retry: true", status: 400, header: map[string]string{"x-should-retry": "true"}, body: errorBody("invalid_request_error", "try again", ""), class: recoil.ClassTransient},
	{name: "401 authentication_error", status: 401, body: errorBody("authentication_error", "invalid x-api-key", "invalid_api_key"), class: recoil.ClassPermanent},
	{name: "403 permission_error", status: 403, body: errorBody("permission_error", "Your API key does not have permission to use the specified resource.", ""), class: recoil.ClassPermanent},
	{name: "404 not_found_error", status: 404, body: errorBody("not_found_error", "model: claude-2.0", "model_not_found"), class: recoil.ClassPermanent, code: recoilhttp.CodeNotFound},
	{name: "409 conflict", status: 409, body: errorBody("conflict_error", "the resource was changed", ""), class: recoil.ClassPermanent},
	{name: "413 request_too_large", status: 413, body: errorBody("request_too_large", "Request exceeds the maximum allowed number of bytes.", ""), class: recoil.ClassPermanent},
	{name: "422 unprocessable", status: 422, body: errorBody("invalid_request_error", "messages: roles must alternate", ""), class: recoil.ClassPermanent},
	{name: "429 with Retry-After: 1", status: 429, header: map[string]string{"Retry-After": "1"}, body: errorBody("rate_limit_error", "Number of request tokens has exceeded your per-minute rate limit", "rate_limit_exceeded"), class: recoil.ClassThrottled, wait: time.Second},
	{name: "429 with an HTTP-date Retry-After", status: 429, header: map[string]string{"Retry-After": now.Add(3 * time.Second).Format(http.TimeFormat)}, body: errorBody("rate_limit_error", "slow down", ""), class: recoil.ClassThrottled, wait: 3 * time.Second},
	{name: "429 quota exhausted, with Retry-After: 1", status: 429, header: map[string]string{"Retry-After": "1"}, body: quotaBody, class: recoil.ClassPermanent},
	{name: "500 api_error", status: 500, body: errorBody("api_error", "Internal server error", ""), class: recoil.ClassTransient},
	{name: "500 with x-should-retry: false", status: 500, header: map[string]string{"x-should-retry": "false"}, body: errorBody("api_error", "Internal server error", ""), class: recoil.ClassPermanent, code: recoilhttp.CodeDoNotRetry},
	{name: "503 from a proxy, not JSON", status: 503, header: map[string]string{"Content-Type": "text/plain"}, body: sameBody("upstream connect error or disconnect/reset before headers"), class: recoil.ClassOverloaded},
	{name: "529 without a body", status: 529, body: sameBody(""), class: recoil.ClassOverloaded},
	{name: "529 overloaded_error", status: 529, body: errorBody("overloaded_error", "Overloaded", ""), class: recoil.ClassOverloaded, code: "overloaded_error"},
}

// TestClassifyMatchesTransport checks, for every status and each SDK, that
// Classify's verdict on the SDK's error is the verdict recoilhttp.Classify
// (the Transport's table) gives the response the SDK received, and that
// classifying leaves the response body for the caller to read.
func TestClassifyMatchesTransport(t *testing.T) {
	for _, p := range providers {
		for _, tt := range statusCases {
			t.Run(p.name+"/"+tt.name, func(t *testing.T) {
				body := tt.body(p)
				srv := httptest.NewServer(&counter{answer: answer{status: tt.status, header: tt.header, body: body}})
				t.Cleanup(srv.Close)
				base := http.DefaultTransport.(*http.Transport).Clone()
				t.Cleanup(base.CloseIdleConnections)
				rec := &recorder{base: base}

				err := p.call(t.Context(), srv.URL, &http.Client{Transport: rec})

				resp, ok := p.response(err)
				if !ok {
					t.Fatalf("SDK call error = %v (%T), want the SDK's error type", err, err)
				}
				req, seen := rec.last()
				want := recoilhttp.Classify(req, seen, nil, now)
				// Several goroutines classify the one error, as the caller's
				// logging might while the policy decides: -race watches.
				verdicts := make(chan recoil.Verdict, 4)
				for range cap(verdicts) {
					go func() { verdicts <- recoilsdk.ClassifyAt(err, now) }()
				}
				var got recoil.Verdict
				for i := range cap(verdicts) {
					v := <-verdicts
					if v != want {
						t.Errorf("ClassifyAt(err) #%d = %+v, want recoilhttp.Classify's %+v", i, v, want)
					}
					got = v
				}
				if got.Class != tt.class || got.Wait != tt.wait {
					t.Errorf("ClassifyAt(err) = %v, %v; want %v, %v (%s)", got.Class, got.Wait, tt.class, tt.wait, got.Reason)
				}
				if tt.code != "" && got.Code != tt.code {
					t.Errorf("ClassifyAt(err).Code = %q, want %q", got.Code, tt.code)
				}
				if b, err := io.ReadAll(resp.Body); err != nil || string(b) != body {
					t.Errorf("after ClassifyAt, the SDK error's Response.Body reads %q, %v; want %q, nil", b, err, body)
				}
			})
		}
	}
}

// TestDoAttempts runs recoil.Do with Classify around each SDK, for every
// status: permanent failures are tried once, retryable ones MaxAttempts
// times, throttled ones after the server-directed wait. It runs in a
// synctest bubble, so the Retry-After waits take no real time.
func TestDoAttempts(t *testing.T) {
	for _, p := range providers {
		for _, tt := range statusCases {
			t.Run(p.name+"/"+tt.name, func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					c := &counter{answer: answer{status: tt.status, header: tt.header, body: tt.body(p)}}
					url, hc := pipeServer(t, c)
					policy := &recoil.Policy{
						MaxAttempts:     maxAttempts,
						Classify:        recoilsdk.Classify,
						Backoff:         backoff.None{},
						OverloadBackoff: backoff.None{},
						Budget:          recoil.NoBudget,
					}
					start := time.Now()

					err := recoil.Do(t.Context(), policy, func(ctx context.Context) error {
						return p.call(ctx, url, hc)
					})

					elapsed := time.Since(start)
					want := 1
					if tt.class.Retryable() {
						want = maxAttempts
					}
					if got := int(c.n.Load()); got != want {
						t.Errorf("server saw %d attempts, want %d", got, want)
					}
					var re *recoil.Error
					if !errors.As(err, &re) {
						t.Fatalf("recoil.Do = %v, want a *recoil.Error", err)
					}
					if re.Verdict.Class != tt.class {
						t.Errorf("recoil.Error.Verdict.Class = %v, want %v (%s)", re.Verdict.Class, tt.class, re.Verdict.Reason)
					}
					if _, ok := p.response(err); !ok {
						t.Errorf("recoil.Do error %v does not unwrap to the SDK's error", err)
					}
					if want > 1 && elapsed < tt.wait {
						t.Errorf("the call took %v, want at least the server's wait %v", elapsed, tt.wait)
					}
				})
			})
		}
	}
}

// bareDoAttempts400 is how many attempts recoil.Do makes of an SDK's 400
// without Classify: the core cannot see a status held in a field (the SDK
// errors have StatusCode int, not a StatusCode() method), so the error is
// unclassified and retried as transient. This is what the adapter fixes; if
// the core learns to classify the SDKs' errors, this becomes 1.
const bareDoAttempts400 = maxAttempts

// TestDoWithoutClassify shows the failure Classify exists for: without it,
// recoil.Do retries a 400 the validator will reject every time.
func TestDoWithoutClassify(t *testing.T) {
	for _, p := range providers {
		t.Run(p.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				body := p.shape("invalid_request_error", "max_tokens: Field required", "")
				c := &counter{answer: answer{status: 400, body: body}}
				url, hc := pipeServer(t, c)
				policy := &recoil.Policy{MaxAttempts: maxAttempts, Backoff: backoff.None{}, Budget: recoil.NoBudget}

				_ = recoil.Do(t.Context(), policy, func(ctx context.Context) error {
					return p.call(ctx, url, hc)
				})

				if got := int(c.n.Load()); got != bareDoAttempts400 {
					t.Errorf("without Classify, server saw %d attempts of a 400, want %d", got, bareDoAttempts400)
				}
			})
		})
	}
}

// TestClassifyAfterBodyRead checks that the provider's error still reaches
// the verdict when the caller has read the response body first: Classify
// reads the SDK error's own copy.
func TestClassifyAfterBodyRead(t *testing.T) {
	for _, p := range providers {
		t.Run(p.name, func(t *testing.T) {
			srv := httptest.NewServer(&counter{answer: answer{status: 429, body: p.quota}})
			t.Cleanup(srv.Close)
			hc := &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
			t.Cleanup(hc.CloseIdleConnections)

			err := p.call(t.Context(), srv.URL, hc)

			resp, ok := p.response(err)
			if !ok {
				t.Fatalf("SDK call error = %v (%T), want the SDK's error type", err, err)
			}
			if _, err := io.Copy(io.Discard, resp.Body); err != nil {
				t.Fatalf("reading the SDK error's body: %v", err)
			}
			if got := recoilsdk.ClassifyAt(err, now); got.Class != recoil.ClassPermanent {
				t.Errorf("ClassifyAt(err) with the body read = %v, want permanent (the quota in the body)", got)
			}
		})
	}
}

// TestClassifyErrors covers errors without a response: SDK errors built by
// hand, as tests build them; wrapped ones; marked ones; and others.
func TestClassifyErrors(t *testing.T) {
	plain := errors.New("connection reset by peer")
	tests := []struct {
		name string
		err  error
		want recoil.Verdict // Class and Code; the zero Verdict: no opinion
	}{
		{"nil", nil, recoil.Verdict{}},
		{"not an SDK error", plain, recoil.Verdict{}},
		{"context.Canceled", context.Canceled, recoil.Verdict{}},
		{"anthropic 400 status only", &anthropic.Error{StatusCode: 400}, recoil.Verdict{Class: recoil.ClassPermanent}},
		{"anthropic 404 status only", &anthropic.Error{StatusCode: 404}, recoil.Verdict{Class: recoil.ClassPermanent, Code: recoilhttp.CodeNotFound}},
		{"anthropic 529 status only", &anthropic.Error{StatusCode: 529}, recoil.Verdict{Class: recoil.ClassOverloaded}},
		{"anthropic without a status", &anthropic.Error{}, recoil.Verdict{}},
		{"openai 429 status only", &openai.Error{StatusCode: 429}, recoil.Verdict{Class: recoil.ClassThrottled}},
		{"openai 429 insufficient_quota fields", &openai.Error{StatusCode: 429, Type: "insufficient_quota", Code: "insufficient_quota"}, recoil.Verdict{Class: recoil.ClassPermanent, Code: "insufficient_quota"}},
		{"openai 500 status only", &openai.Error{StatusCode: 500}, recoil.Verdict{Class: recoil.ClassTransient}},
		{"wrapped openai 401", fmt.Errorf("summarize: %w", &openai.Error{StatusCode: 401}), recoil.Verdict{Class: recoil.ClassPermanent, Code: "unauthorized"}},
		{"joined anthropic 503", errors.Join(plain, &anthropic.Error{StatusCode: 503}), recoil.Verdict{Class: recoil.ClassOverloaded}},
		// The caller's mark wins: Classify has no opinion, and the policy's
		// built-in rules apply the mark.
		{"marked anthropic 529", recoil.Permanent(&anthropic.Error{StatusCode: 529}), recoil.Verdict{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := recoilsdk.ClassifyAt(tt.err, now)
			if got.Class != tt.want.Class || got.Code != tt.want.Code {
				t.Errorf("ClassifyAt(%v) = %v (Code %q), want %v (Code %q)", tt.err, got, got.Code, tt.want.Class, tt.want.Code)
			}
			if tt.want.Class == recoil.ClassUnknown && got != (recoil.Verdict{}) {
				t.Errorf("ClassifyAt(%v) = %+v, want the zero Verdict", tt.err, got)
			}
		})
	}
}

// TestClassifyMarkWinsInPolicy checks that a policy using Classify still
// honours a verdict the caller attached to an SDK error.
func TestClassifyMarkWinsInPolicy(t *testing.T) {
	p := &recoil.Policy{Classify: recoilsdk.Classify}
	err := recoil.Permanent(&anthropic.Error{StatusCode: 529})
	if got := p.Verdict(err, recoil.Verdict{}); got.Class != recoil.ClassPermanent {
		t.Errorf("Policy.Verdict(Permanent(529)) = %v, want permanent", got)
	}
}

// TestClassifyStreamErrorEvent runs the Anthropic SDK's streaming call
// against a server whose 200 stream starts with an error event: the SDK
// reports it as an *anthropic.Error with status 200, and Classify gives it
// the verdict recoilhttp.Transport gives such a stream.
func TestClassifyStreamErrorEvent(t *testing.T) {
	tests := []struct {
		name  string
		typ   string
		class recoil.Class
	}{
		{"overloaded_error", "overloaded_error", recoil.ClassOverloaded},
		{"api_error", "api_error", recoil.ClassTransient},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			event := `{"type":"error","error":{"type":"` + tt.typ + `","message":"stream failed"}}`
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_, _ = io.Copy(io.Discard, r.Body)
				w.Header().Set("Content-Type", "text/event-stream")
				w.WriteHeader(http.StatusOK)
				_, _ = io.WriteString(w, "event: error\ndata: "+event+"\n\n")
			}))
			t.Cleanup(srv.Close)
			hc := &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
			t.Cleanup(hc.CloseIdleConnections)
			client := anthropic.NewClient(aoption.WithAPIKey("sk-ant-test-not-a-key"), aoption.WithBaseURL(srv.URL), aoption.WithHTTPClient(hc), aoption.WithMaxRetries(0))

			stream := client.Messages.NewStreaming(t.Context(), anthropic.MessageNewParams{
				Model:     "claude-test",
				MaxTokens: 64,
				Messages:  []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("Say hello"))},
			})
			for stream.Next() {
			}
			err := stream.Err()
			_ = stream.Close()

			var ae *anthropic.Error
			if !errors.As(err, &ae) || ae.StatusCode != http.StatusOK {
				t.Fatalf("stream.Err() = %v (%T), want an *anthropic.Error with status 200", err, err)
			}
			got := recoilsdk.ClassifyAt(err, now)
			if got.Class != tt.class || got.Code != recoilhttp.CodeStreamError || !got.MayHaveExecuted {
				t.Errorf("ClassifyAt(stream error) = %+v, want %v with Code %q and MayHaveExecuted", got, tt.class, recoilhttp.CodeStreamError)
			}
		})
	}
}
