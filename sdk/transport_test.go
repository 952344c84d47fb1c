package recoilsdk_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/recoil-go/recoil"
	"github.com/recoil-go/recoil/backoff"
	"github.com/recoil-go/recoil/recoilhttp"
)

// These tests run the official Anthropic Go SDK, with its own retries off,
// over a Transport, against an httptest server that plays the Messages API:
// the retry decisions the SDK's caller sees are the Transport's alone. They
// use real loopback sockets (the SDK and httptest need a network), so their
// waits are real time and their bounds generous.

// Fixtures, in the shapes the providers send.
const (
	sdkInvalidMessage = `tools.0.input_schema: unknown field "strict"`
	sdkInvalid        = `{"type":"error","error":{"type":"invalid_request_error","message":"tools.0.input_schema: unknown field \"strict\""},"request_id":"req_1"}`
	sdkQuotaMessage   = "You exceeded your current quota, please check your plan and billing details."
	sdkQuotaOpenAI    = `{"error":{"message":"You exceeded your current quota, please check your plan and billing details.","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}`
	sdkBillingMessage = "Your credit balance is too low to access the Anthropic API."
	sdkBilling        = `{"type":"error","error":{"type":"billing_error","message":"Your credit balance is too low to access the Anthropic API."}}`
	sdkOverloaded     = `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`
	sdkRateLimited    = `{"type":"error","error":{"type":"rate_limit_error","message":"Number of request tokens has exceeded your per-minute rate limit"}}`
	sdkMessage        = `{"id":"msg_1","type":"message","role":"assistant","model":"claude-test","content":[{"type":"text","text":"Hello"}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":3,"output_tokens":1}}`

	sdkStreamStart = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"claude-test\",\"content\":[],\"stop_reason\":null,\"stop_sequence\":null,\"usage\":{\"input_tokens\":3,\"output_tokens\":1}}}\n\n"
	sdkStreamDelta = "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Hello\"}}\n\n"
	sdkStreamPing  = "event: ping\ndata: {\"type\": \"ping\"}\n\n"
)

// sdkMargin bounds how late a wait or an idle timeout may fire on a loaded
// machine under -race before the test calls it wrong.
const sdkMargin = 2 * time.Second

// sdkStep is one scripted answer of the fake provider.
type sdkStep struct {
	status int
	header map[string]string
	body   string
}

// sdkAttempt is what the fake provider saw of one attempt.
type sdkAttempt struct {
	at         time.Time
	body       string
	retryCount string // X-Stainless-Retry-Count: the SDK's own attempt number
	key        string // Idempotency-Key
}

// sdkProvider answers POST /v1/messages with its script, one step per
// attempt (the last step repeats), and records every attempt.
type sdkProvider struct {
	steps []sdkStep

	mu       sync.Mutex
	attempts []sdkAttempt
}

func (p *sdkProvider) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	p.mu.Lock()
	n := len(p.attempts)
	p.attempts = append(p.attempts, sdkAttempt{
		at:         time.Now(),
		body:       string(body),
		retryCount: r.Header.Get("X-Stainless-Retry-Count"),
		key:        r.Header.Get("Idempotency-Key"),
	})
	p.mu.Unlock()
	if r.Method != http.MethodPost || r.URL.Path != "/v1/messages" {
		http.Error(w, "unexpected "+r.Method+" "+r.URL.Path, http.StatusTeapot)
		return
	}
	s := p.steps[min(n, len(p.steps)-1)]
	for k, v := range s.header {
		w.Header().Set(k, v)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(s.status)
	_, _ = io.WriteString(w, s.body)
}

func (p *sdkProvider) seen() []sdkAttempt {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.attempts)
}

// sdkPolicy retries quickly: three attempts, 10ms between them unless the
// server directs a wait, and no retry budget to run out across subtests.
func sdkPolicy() *recoil.Policy {
	return &recoil.Policy{
		MaxAttempts:     3,
		Backoff:         backoff.Constant(10 * time.Millisecond),
		OverloadBackoff: backoff.Constant(10 * time.Millisecond),
		Budget:          recoil.NoBudget,
	}
}

// sdkClient returns an SDK client for srv, with the SDK's retries off and tr
// (given its own base transport) doing the retrying. The base's idle
// connections are closed when the test ends: register the server's cleanup
// after calling sdkClient, so that it runs first.
func sdkClient(t *testing.T, srv *httptest.Server, tr *recoilhttp.Transport) anthropic.Client {
	t.Helper()
	base := http.DefaultTransport.(*http.Transport).Clone()
	tr.Base = base
	t.Cleanup(base.CloseIdleConnections)
	return anthropic.NewClient(
		option.WithAPIKey("sk-ant-test-not-a-key"),
		option.WithBaseURL(srv.URL),
		option.WithMaxRetries(0),
		option.WithHTTPClient(&http.Client{Transport: tr}),
	)
}

// sdkParams is a small Messages API request.
func sdkParams() anthropic.MessageNewParams {
	return anthropic.MessageNewParams{
		Model:     "claude-test",
		MaxTokens: 64,
		Messages:  []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("Say hello"))},
	}
}

// TestSDKMessages runs client.Messages.New over a Transport: permanent
// failures are tried once and reach the caller with the provider's message;
// overloaded and throttled ones are retried after the server-directed wait,
// and the call succeeds.
func TestSDKMessages(t *testing.T) {
	tests := []struct {
		name  string
		steps []sdkStep
		// idempotencyKey opts the POST in to retries with a generated key
		// instead of RetryNonIdempotent.
		idempotencyKey bool
		wantAttempts   int
		wantStatus     int    // the SDK error's status; 0: the call succeeds
		wantMessage    string // the SDK error's provider message
		minGap         time.Duration
	}{
		{
			name:         "400 invalid_request_error is tried once",
			steps:        []sdkStep{{status: 400, body: sdkInvalid}},
			wantAttempts: 1,
			wantStatus:   400,
			wantMessage:  sdkInvalidMessage,
		},
		{
			name:         "429 insufficient_quota is tried once",
			steps:        []sdkStep{{status: 429, header: map[string]string{"retry-after": "1"}, body: sdkQuotaOpenAI}},
			wantAttempts: 1,
			wantStatus:   429,
			wantMessage:  sdkQuotaMessage,
		},
		{
			name:         "429 billing_error is tried once",
			steps:        []sdkStep{{status: 429, body: sdkBilling}},
			wantAttempts: 1,
			wantStatus:   429,
			wantMessage:  sdkBillingMessage,
		},
		{
			name: "529 overloaded_error waits retry-after-ms",
			steps: []sdkStep{
				{status: 529, header: map[string]string{"retry-after-ms": "300"}, body: sdkOverloaded},
				{status: 200, body: sdkMessage},
			},
			wantAttempts: 2,
			minGap:       300 * time.Millisecond,
		},
		{
			name: "529 overloaded_error with an idempotency key waits retry-after-ms",
			steps: []sdkStep{
				{status: 529, header: map[string]string{"retry-after-ms": "300"}, body: sdkOverloaded},
				{status: 200, body: sdkMessage},
			},
			idempotencyKey: true,
			wantAttempts:   2,
			minGap:         300 * time.Millisecond,
		},
		{
			name: "429 rate_limit_error waits retry-after",
			steps: []sdkStep{
				{status: 429, header: map[string]string{"retry-after": "1"}, body: sdkRateLimited},
				{status: 200, body: sdkMessage},
			},
			wantAttempts: 2,
			minGap:       time.Second,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &sdkProvider{steps: tt.steps}
			srv := httptest.NewServer(p)
			var (
				mu        sync.Mutex
				summaries []recoilhttp.Summary
			)
			tr := &recoilhttp.Transport{
				Policy: sdkPolicy(),
				Observe: func(_ context.Context, s recoilhttp.Summary) {
					mu.Lock()
					summaries = append(summaries, s)
					mu.Unlock()
				},
			}
			if tt.idempotencyKey {
				tr.IdempotencyKey = true
			} else {
				tr.RetryNonIdempotent = func(*http.Request) bool { return true }
			}
			client := sdkClient(t, srv, tr)
			t.Cleanup(srv.Close)

			msg, err := client.Messages.New(t.Context(), sdkParams())

			seen := p.seen()
			if got := len(seen); got != tt.wantAttempts {
				t.Errorf("server saw %d attempts, want %d", got, tt.wantAttempts)
			}
			for i, a := range seen {
				if a.retryCount != "0" {
					t.Errorf("attempt %d: X-Stainless-Retry-Count = %q, want \"0\" (the SDK must not retry)", i+1, a.retryCount)
				}
				if i > 0 && a.body != seen[0].body {
					t.Errorf("attempt %d body = %q, want the first attempt's %q", i+1, a.body, seen[0].body)
				}
				if tt.idempotencyKey && (a.key == "" || a.key != seen[0].key) {
					t.Errorf("attempt %d: Idempotency-Key = %q, want the first attempt's, non-empty (%q)", i+1, a.key, seen[0].key)
				}
			}
			if tt.minGap > 0 && len(seen) >= 2 {
				gap := seen[1].at.Sub(seen[0].at)
				if gap < tt.minGap || gap >= tt.minGap+sdkMargin {
					t.Errorf("second attempt arrived %v after the first, want in [%v, %v)", gap, tt.minGap, tt.minGap+sdkMargin)
				}
			}

			mu.Lock()
			if len(summaries) != 1 {
				t.Errorf("Transport reported %d summaries, want 1", len(summaries))
			} else if s := summaries[0]; s.Attempts != tt.wantAttempts || s.Provider != tt.wantMessage {
				t.Errorf("Summary: Attempts = %d, Provider = %q; want %d, %q (verdict: %s)", s.Attempts, s.Provider, tt.wantAttempts, tt.wantMessage, s.Verdict.Reason)
			}
			mu.Unlock()

			if tt.wantStatus == 0 {
				if err != nil {
					t.Fatalf("Messages.New: %v, want success", err)
				}
				if len(msg.Content) != 1 || msg.Content[0].Text != "Hello" {
					t.Errorf("Messages.New content = %+v, want one text block \"Hello\"", msg.Content)
				}
				return
			}
			var apiErr *anthropic.Error
			if !errors.As(err, &apiErr) {
				t.Fatalf("Messages.New error = %v (%T), want an *anthropic.Error", err, err)
			}
			if apiErr.StatusCode != tt.wantStatus || apiErr.Message != tt.wantMessage {
				t.Errorf("Messages.New error: status %d, message %q; want %d, %q", apiErr.StatusCode, apiErr.Message, tt.wantStatus, tt.wantMessage)
			}
		})
	}
}

// TestSDKStreamIdle runs client.Messages.NewStreaming over a Transport with
// an IdleTimeout against a server that sends message_start and one
// content_block_delta and then stalls: silent, or answering nothing but
// pings. The stream's Err is the idle error, after the idle timeout and not
// much later, and the stalled attempt is not retried: content had reached
// the caller.
func TestSDKStreamIdle(t *testing.T) {
	const idle = 200 * time.Millisecond
	tests := []struct {
		name  string
		pings bool // keep sending pings while stalled
	}{
		{name: "silent"},
		{name: "pings only", pings: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var (
				mu       sync.Mutex
				attempts int
			)
			sent := make(chan time.Time, 1) // just before the delta went out
			release := make(chan struct{})
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_, _ = io.Copy(io.Discard, r.Body)
				mu.Lock()
				attempts++
				mu.Unlock()
				w.Header().Set("Content-Type", "text/event-stream")
				w.Header().Set("Cache-Control", "no-cache")
				w.WriteHeader(http.StatusOK)
				select { // taken before the write: the client cannot read the delta earlier
				case sent <- time.Now():
				default: // a later attempt: counted, not timed
				}
				_, _ = io.WriteString(w, sdkStreamStart+sdkStreamDelta)
				_ = http.NewResponseController(w).Flush()
				var tick <-chan time.Time
				if tt.pings {
					tk := time.NewTicker(idle / 4)
					defer tk.Stop()
					tick = tk.C
				}
				for { // stall until the client goes or the test ends
					select {
					case <-r.Context().Done():
						return
					case <-release:
						return
					case <-tick:
						if _, err := io.WriteString(w, sdkStreamPing); err != nil {
							return
						}
						if http.NewResponseController(w).Flush() != nil {
							return
						}
					}
				}
			}))
			tr := &recoilhttp.Transport{
				Policy:             sdkPolicy(),
				RetryNonIdempotent: func(*http.Request) bool { return true },
				IdleTimeout:        idle,
			}
			client := sdkClient(t, srv, tr)
			t.Cleanup(func() { // unblock the stalled handler, then stop the server
				close(release)
				srv.CloseClientConnections()
				srv.Close()
			})
			// A safety net: a Transport that never gives up fails here, not by
			// hanging the package.
			ctx, cancel := context.WithTimeout(t.Context(), idle+2*sdkMargin)
			defer cancel()

			stream := client.Messages.NewStreaming(ctx, sdkParams())
			defer stream.Close()
			var events []string
			for stream.Next() {
				events = append(events, stream.Current().Type)
			}
			done := time.Now()
			err := stream.Err()

			if want := []string{"message_start", "content_block_delta"}; !slices.Equal(events, want) {
				t.Errorf("stream events = %q, want %q", events, want)
			}
			if !errors.Is(err, recoilhttp.ErrIdle) {
				t.Fatalf("stream.Err() = %v (%T), want one matching recoilhttp.ErrIdle", err, err)
			}
			var se *recoilhttp.StreamError
			if !errors.As(err, &se) || se.Delivered == 0 {
				t.Errorf("stream.Err() = %v, want a *recoilhttp.StreamError with bytes delivered", err)
			}
			var sentAt time.Time
			select {
			case sentAt = <-sent:
			default:
				t.Fatal("the server never sent the delta")
			}
			if elapsed := done.Sub(sentAt); elapsed < idle || elapsed >= idle+sdkMargin {
				t.Errorf("stream failed %v after the delta was sent, want in [%v, %v)", elapsed, idle, idle+sdkMargin)
			}
			mu.Lock()
			if attempts != 1 {
				t.Errorf("server saw %d attempts, want 1", attempts)
			}
			mu.Unlock()
		})
	}
}
