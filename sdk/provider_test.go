package recoilsdk_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	aoption "github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/openai/openai-go/v3"
	ooption "github.com/openai/openai-go/v3/option"
	"github.com/recoil-go/recoil/internal/testsvc"
)

// The tests drive the real SDK clients, with their own retries off, against
// an httptest server that answers like the provider. This file holds the
// fakes: the providers' body shapes and calls, the server, a recording
// RoundTripper and an in-memory network for synctest bubbles.

// provider is one model API and its official SDK.
type provider struct {
	name string
	// shape is an error body in the provider's own shape. code is OpenAI's
	// machine-readable code; Anthropic's bodies have none.
	shape func(typ, message, code string) string
	// quota is the provider's body for a 429 that waiting will not cure.
	quota string
	// call makes one SDK call to baseURL through hc, with the SDK's
	// retries off, and returns its error.
	call func(ctx context.Context, baseURL string, hc *http.Client) error
	// response is the *http.Response an SDK error carries; ok is false if
	// err is not the SDK's error.
	response func(err error) (resp *http.Response, ok bool)
}

var (
	anthropicProvider = provider{
		name: "anthropic",
		shape: func(typ, message, _ string) string {
			return `{"type":"error","error":{"type":` + strconv.Quote(typ) + `,"message":` + strconv.Quote(message) + `},"request_id":"req_011CTest"}`
		},
		quota: `{"type":"error","error":{"type":"billing_error","message":"Your credit balance is too low to access the Anthropic API."}}`,
		call:  callAnthropic,
		response: func(err error) (*http.Response, bool) {
			var e *anthropic.Error
			if !errors.As(err, &e) {
				return nil, false
			}
			return e.Response, true
		},
	}
	openAIProvider = provider{
		name: "openai",
		shape: func(typ, message, code string) string {
			c := "null"
			if code != "" {
				c = strconv.Quote(code)
			}
			return `{"error":{"message":` + strconv.Quote(message) + `,"type":` + strconv.Quote(typ) + `,"param":null,"code":` + c + `}}`
		},
		quota: `{"error":{"message":"You exceeded your current quota, please check your plan and billing details.","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}`,
		call:  callOpenAI,
		response: func(err error) (*http.Response, bool) {
			var e *openai.Error
			if !errors.As(err, &e) {
				return nil, false
			}
			return e.Response, true
		},
	}
	providers = []provider{anthropicProvider, openAIProvider}
)

// callAnthropic sends a small Messages API request.
func callAnthropic(ctx context.Context, baseURL string, hc *http.Client) error {
	client := anthropic.NewClient(
		aoption.WithAPIKey("sk-ant-test-not-a-key"),
		aoption.WithBaseURL(baseURL),
		aoption.WithHTTPClient(hc),
		aoption.WithMaxRetries(0),
	)
	_, err := client.Messages.New(ctx, anthropic.MessageNewParams{
		Model:     "claude-test",
		MaxTokens: 64,
		Messages:  []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("Say hello"))},
	})
	return err
}

// callOpenAI sends a small Chat Completions request.
func callOpenAI(ctx context.Context, baseURL string, hc *http.Client) error {
	client := openai.NewClient(
		ooption.WithAPIKey("sk-test-not-a-key"),
		ooption.WithBaseURL(baseURL),
		ooption.WithHTTPClient(hc),
		ooption.WithMaxRetries(0),
	)
	_, err := client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{
		Model:    "gpt-test",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Say hello")},
	})
	return err
}

// answer is what the fake provider sends back to every request.
type answer struct {
	status int
	header map[string]string // Content-Type is application/json unless set here
	body   string
}

// counter is an http.Handler that sends its answer and counts the requests.
type counter struct {
	answer
	n atomic.Int32
}

func (c *counter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c.n.Add(1)
	_, _ = io.Copy(io.Discard, r.Body)
	w.Header().Set("Content-Type", "application/json")
	for k, v := range c.header {
		w.Header().Set(k, v)
	}
	w.WriteHeader(c.status)
	_, _ = io.WriteString(w, c.body)
}

// recorder is an http.RoundTripper that keeps a copy of the last response it
// carried, so that a test can classify the very response the SDK saw.
type recorder struct {
	base http.RoundTripper

	mu     sync.Mutex
	req    *http.Request
	status int
	header http.Header
	body   []byte
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := r.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	body, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	r.req, r.status, r.header, r.body = req, resp.StatusCode, resp.Header.Clone(), body
	r.mu.Unlock()
	resp.Body = io.NopCloser(bytes.NewReader(body))
	return resp, nil
}

// last returns the last request and a fresh copy of its response.
func (r *recorder) last() (*http.Request, *http.Response) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.req == nil {
		return nil, nil
	}
	return r.req, &http.Response{
		StatusCode:    r.status,
		Header:        r.header.Clone(),
		Body:          io.NopCloser(bytes.NewReader(r.body)),
		ContentLength: int64(len(r.body)),
		Request:       r.req,
	}
}

// pipeServer starts an httptest server for h whose connections are net.Pipe
// pairs, and returns its URL and a client that dials it. Inside a synctest
// bubble both ends then wait durably, so the bubble's clock can run through
// a Retry-After; on a real socket it could not. Both are closed when the
// test ends.
func pipeServer(t *testing.T, h http.Handler) (string, *http.Client) {
	t.Helper()
	pl := testsvc.NewPipeListener()
	srv := httptest.NewUnstartedServer(h)
	_ = srv.Listener.Close() // the loopback listener it made; pl replaces it
	srv.Listener = pl
	srv.Start()
	tr := &http.Transport{DialContext: pl.DialContext}
	t.Cleanup(func() {
		srv.Close()
		tr.CloseIdleConnections()
	})
	return srv.URL, &http.Client{Transport: tr}
}
