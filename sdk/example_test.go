package recoilsdk_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/openai/openai-go/v3"
	ooption "github.com/openai/openai-go/v3/option"

	"github.com/recoil-go/recoil"
	"github.com/recoil-go/recoil/backoff"
	"github.com/recoil-go/recoil/recoilhttp"
	recoilsdk "github.com/recoil-go/recoil/sdk"
)

// fakeAPI serves the given status and body to every request, with a JSON
// content type, and counts the requests in n.
func fakeAPI(status int, body string, n *atomic.Int32) *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}))
}

// recoil.Do around the Anthropic SDK: the validator's 400 is permanent, so
// it is sent once, and the provider's complaint reaches the verdict.
func ExampleClassify() {
	var requests atomic.Int32
	api := fakeAPI(http.StatusBadRequest, `{"type":"error","error":{"type":"invalid_request_error","message":"max_tokens: Field required"}}`, &requests)
	defer api.Close()

	// The SDK's own retries off: recoil is the one retry layer.
	client := anthropic.NewClient(option.WithBaseURL(api.URL), option.WithAPIKey("sk-ant-example"), option.WithMaxRetries(0))
	models := &recoil.Policy{Classify: recoilsdk.Classify}

	_, err := recoil.Get(context.Background(), models, func(ctx context.Context) (*anthropic.Message, error) {
		return client.Messages.New(ctx, anthropic.MessageNewParams{
			Model:    "claude-example",
			Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("Hello"))},
		})
	})

	var re *recoil.Error
	if errors.As(err, &re) {
		fmt.Println(requests.Load(), "request:", re.Reason)
		fmt.Println(re.Verdict)
	}
	var apiErr *anthropic.Error // the SDK's error is still there to inspect
	if errors.As(err, &apiErr) {
		fmt.Println(apiErr.StatusCode, apiErr.Type())
	}
	// Output:
	// 1 request: permanent error
	// permanent: 400 invalid_request_error: max_tokens: Field required
	// 400 invalid_request_error
}

// recoil.Do around the OpenAI SDK: an overloaded 503 is retried, after the
// policy's overload backoff, and the second attempt succeeds.
func ExampleClassify_openAI() {
	var requests atomic.Int32
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		if requests.Add(1) == 1 {
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = io.WriteString(w, `{"error":{"message":"The server is overloaded or not ready yet.","type":"server_error","param":null,"code":null}}`)
			return
		}
		_, _ = io.WriteString(w, `{"id":"chatcmpl-1","object":"chat.completion","created":0,"model":"gpt-example","choices":[{"index":0,"message":{"role":"assistant","content":"Hello!"},"finish_reason":"stop"}]}`)
	}))
	defer api.Close()

	client := openai.NewClient(ooption.WithBaseURL(api.URL), ooption.WithAPIKey("sk-example"), ooption.WithMaxRetries(0))
	models := &recoil.Policy{
		Classify:        recoilsdk.Classify,
		OverloadBackoff: backoff.Constant(time.Millisecond), // short, for the example
	}

	reply, err := recoil.Get(context.Background(), models, func(ctx context.Context) (*openai.ChatCompletion, error) {
		return client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{
			Model:    "gpt-example",
			Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Hello")},
		})
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(requests.Load(), "requests:", reply.Choices[0].Message.Content)
	// Output: 2 requests: Hello!
}

// The verdict's Code tells a retired model (a 404, recoilhttp.CodeNotFound)
// from other permanent failures, so the caller can fall back to another.
func ExampleClassify_fallback() {
	var requests atomic.Int32
	api := fakeAPI(http.StatusNotFound, `{"type":"error","error":{"type":"not_found_error","message":"model: claude-retired"}}`, &requests)
	defer api.Close()

	client := anthropic.NewClient(option.WithBaseURL(api.URL), option.WithAPIKey("sk-ant-example"), option.WithMaxRetries(0))
	models := &recoil.Policy{Classify: recoilsdk.Classify}

	_, err := recoil.Get(context.Background(), models, func(ctx context.Context) (*anthropic.Message, error) {
		return client.Messages.New(ctx, anthropic.MessageNewParams{
			Model:     "claude-retired",
			MaxTokens: 64,
			Messages:  []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("Hello"))},
		})
	})

	var re *recoil.Error
	if errors.As(err, &re) && re.Verdict.Code == recoilhttp.CodeNotFound {
		fmt.Println("model not found after", requests.Load(), "request: fall back to another")
	}
	// Output: model not found after 1 request: fall back to another
}

// A Retry-After given as an HTTP date is a wait only relative to an
// instant: ClassifyAt dates it at the instant given, so a test (or a
// simulation on virtual time) gets the same wait on every run.
func ExampleClassifyAt() {
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Retry-After", "Tue, 01 Dec 2026 12:00:30 GMT")
		w.WriteHeader(http.StatusTooManyRequests)
		_, _ = io.WriteString(w, `{"type":"error","error":{"type":"rate_limit_error","message":"Number of requests has exceeded your rate limit"}}`)
	}))
	defer api.Close()

	client := anthropic.NewClient(option.WithBaseURL(api.URL), option.WithAPIKey("sk-ant-example"), option.WithMaxRetries(0))
	_, err := client.Messages.New(context.Background(), anthropic.MessageNewParams{
		Model:     "claude-example",
		MaxTokens: 64,
		Messages:  []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("Hello"))},
	})
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	v := recoilsdk.ClassifyAt(err, now)
	fmt.Println(v.Class, v.Wait, v.Code)
	// Output: throttled 30s rate_limit_error
}
