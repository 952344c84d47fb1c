package recoilsdk_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/anthropics/anthropic-sdk-go/v2"
	aoption "github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/openai/openai-go/v3"
	ooption "github.com/openai/openai-go/v3/option"

	"github.com/recoil-go/recoil"
	"github.com/recoil-go/recoil/recoilhttp"
)

// These tests give one recoilhttp.Transport, with a Fallback of
// Endpoints, to the official SDK clients through WithHTTPClient, and run
// unchanged calling code against fake providers: the attempts move from
// target to target — another model, another key, another region, a
// self-hosted server — under the one policy.

// seenAttempt is what a fake provider saw of one attempt.
type seenAttempt struct {
	host, path, model, auth string
}

// fleetOf plays several providers on one in-memory server, told apart
// by Host: answer decides each attempt's status and error body from what
// it saw; a zero status is a success.
type fleetOf struct {
	answer func(a seenAttempt) (int, string)

	mu   sync.Mutex
	seen []seenAttempt
}

func (p *fleetOf) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var req struct {
		Model string `json:"model"`
	}
	_ = json.Unmarshal(body, &req)
	auth := r.Header.Get("Authorization")
	if k := r.Header.Get("X-Api-Key"); k != "" {
		auth = "x-api-key " + k
	}
	a := seenAttempt{host: r.Host, path: r.URL.Path, model: req.Model, auth: auth}
	p.mu.Lock()
	p.seen = append(p.seen, a)
	p.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	status, errBody := p.answer(a)
	if status != 0 {
		w.WriteHeader(status)
		_, _ = io.WriteString(w, errBody)
		return
	}
	if strings.HasSuffix(a.path, "/messages") {
		_, _ = io.WriteString(w, strings.Replace(sdkMessage, "claude-test", a.model, 1))
		return
	}
	_, _ = io.WriteString(w, `{"id":"chatcmpl-1","object":"chat.completion","created":0,"model":"`+a.model+
		`","choices":[{"index":0,"message":{"role":"assistant","content":"hello from `+a.host+`"},"finish_reason":"stop"}]}`)
}

func (p *fleetOf) attempts() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []string
	for _, a := range p.seen {
		out = append(out, a.host+a.path+" "+a.model+" "+a.auth)
	}
	p.seen = nil
	return out
}

func target(t *testing.T, name, base, auth, model string) recoil.Target {
	t.Helper()
	var h http.Header
	if auth != "" {
		h = http.Header{"Authorization": {auth}}
	}
	tg, err := recoilhttp.NewTarget(name, base, h, model)
	if err != nil {
		t.Fatal(err)
	}
	return tg
}

// TestSDKFallbackOpenAI runs client.Chat.Completions.New, built for one
// provider, through a Transport whose Fallback moves each call on as the
// provider's failure says: the attempts each provider saw, in order, with
// the model in the body and the credential sent.
func TestSDKFallbackOpenAI(t *testing.T) {
	const (
		notFound = `{"error":{"message":"The model gpt-test does not exist","type":"invalid_request_error","param":null,"code":"model_not_found"}}`
		badKey   = `{"error":{"message":"Incorrect API key provided","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`
		tooLong  = `{"error":{"message":"This model's maximum context length is 8192 tokens.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`
		overload = `{"error":{"message":"The server is overloaded","type":"server_error","param":null,"code":null}}`
	)
	primary := func(t *testing.T) recoil.Target {
		return target(t, "primary", "http://api.primary.test/v1", "", "")
	}
	tests := []struct {
		name    string
		keyed   bool // the Transport gives each POST an idempotency key
		targets func(t *testing.T) []recoil.Target
		answer  func(a seenAttempt) (int, string)
		calls   [][]string // per call, the attempts the fleetOf saw
		reports string     // the last call's Summary.Targets
	}{
		{
			name: "a retired model: the next model, same provider and key",
			targets: func(t *testing.T) []recoil.Target {
				return []recoil.Target{primary(t), target(t, "newer", "http://api.primary.test/v1", "", "gpt-next")}
			},
			answer: func(a seenAttempt) (int, string) {
				if a.model == "gpt-test" {
					return 404, notFound
				}
				return 0, ""
			},
			calls: [][]string{
				{"api.primary.test/v1/chat/completions gpt-test Bearer sk-primary", "api.primary.test/v1/chat/completions gpt-next Bearer sk-primary"},
				// The retired model is passed over by the next call.
				{"api.primary.test/v1/chat/completions gpt-next Bearer sk-primary"},
			},
			reports: "primary:0 (cooling down) newer:1",
		},
		{
			name: "a revoked key: the organisation's second key",
			targets: func(t *testing.T) []recoil.Target {
				return []recoil.Target{primary(t), target(t, "second-key", "http://api.primary.test/v1", "Bearer sk-second", "")}
			},
			answer: func(a seenAttempt) (int, string) {
				if a.auth == "Bearer sk-primary" {
					return 401, badKey
				}
				return 0, ""
			},
			calls: [][]string{
				{"api.primary.test/v1/chat/completions gpt-test Bearer sk-primary", "api.primary.test/v1/chat/completions gpt-test Bearer sk-second"},
				{"api.primary.test/v1/chat/completions gpt-test Bearer sk-second"},
			},
			reports: "primary:0 (out until restored) second-key:1",
		},
		{
			// A 529 on a POST may be sent again only under an idempotency
			// key; a refusal (404, 401, 400) may always go elsewhere.
			name:  "an overloaded provider: another region, then a self-hosted server that never sees the key",
			keyed: true,
			targets: func(t *testing.T) []recoil.Target {
				return []recoil.Target{primary(t), target(t, "eu", "http://eu.primary.test/v1", "Bearer sk-eu", ""),
					target(t, "local", "http://llm.internal.test/openai/v1", "", "llama-3")}
			},
			answer: func(a seenAttempt) (int, string) {
				if strings.HasSuffix(a.host, "primary.test") {
					return 529, overload
				}
				return 0, ""
			},
			calls: [][]string{{
				"api.primary.test/v1/chat/completions gpt-test Bearer sk-primary",
				"eu.primary.test/v1/chat/completions gpt-test Bearer sk-eu",
				"llm.internal.test/openai/v1/chat/completions llama-3 ",
			}},
			reports: "primary:1 (overloaded) eu:1 (overloaded) local:1",
		},
		{
			name: "context too long: once, to the model that declares a longer context",
			targets: func(t *testing.T) []recoil.Target {
				p, local, long := primary(t), target(t, "local", "http://llm.internal.test/openai/v1", "", "llama-3"),
					target(t, "long", "http://api.primary.test/v1", "", "gpt-long")
				p.MaxContext, local.MaxContext, long.MaxContext = 8192, 8192, 128000
				return []recoil.Target{p, local, long}
			},
			answer: func(a seenAttempt) (int, string) {
				if a.model != "gpt-long" {
					return 400, tooLong
				}
				return 0, ""
			},
			calls: [][]string{
				{"api.primary.test/v1/chat/completions gpt-test Bearer sk-primary", "api.primary.test/v1/chat/completions gpt-long Bearer sk-primary"},
				// Too long for one request is not too long for the next.
				{"api.primary.test/v1/chat/completions gpt-test Bearer sk-primary", "api.primary.test/v1/chat/completions gpt-long Bearer sk-primary"},
			},
			reports: "primary:1 (context too long) long:1",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				prov := &fleetOf{answer: tt.answer}
				_, hc := pipeServer(t, prov)
				var last recoil.Summary
				p := sdkPolicy()
				p.Fallback = &recoil.Fallback{Targets: tt.targets(t)}
				p.Observe = func(_ context.Context, s recoil.Summary) { last = s }
				tr := &recoilhttp.Transport{Base: hc.Transport, Policy: p, IdempotencyKey: tt.keyed}
				// The calling code: an ordinary client for the primary.
				client := openai.NewClient(
					ooption.WithAPIKey("sk-primary"),
					ooption.WithBaseURL("http://api.primary.test/v1/"),
					ooption.WithHTTPClient(&http.Client{Transport: tr}),
					ooption.WithMaxRetries(0),
				)
				for i, want := range tt.calls {
					resp, err := client.Chat.Completions.New(t.Context(), openai.ChatCompletionNewParams{
						Model:    "gpt-test",
						Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Say hello")},
					})
					if err != nil {
						t.Fatalf("call %d: %v", i+1, err)
					}
					if len(resp.Choices) != 1 {
						t.Fatalf("call %d: %d choices", i+1, len(resp.Choices))
					}
					if got := prov.attempts(); strings.Join(got, "\n") != strings.Join(want, "\n") {
						t.Errorf("call %d: the fleetOf saw\n\t%s\nwant\n\t%s", i+1, strings.Join(got, "\n\t"), strings.Join(want, "\n\t"))
					}
				}
				var rs []string
				for _, r := range last.Targets {
					rs = append(rs, r.String())
				}
				if got := strings.Join(rs, " "); got != tt.reports {
					t.Errorf("the last call's targets: %q, want %q", got, tt.reports)
				}
			})
		})
	}
}

// TestSDKFallbackAnthropic: the Anthropic SDK's client.Messages.New moves
// from a retired model to its successor, and from a key the provider
// refuses to the second key, all within the policy's three attempts.
func TestSDKFallbackAnthropic(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		prov := &fleetOf{answer: func(a seenAttempt) (int, string) {
			switch {
			case a.model == "claude-old":
				return 404, `{"type":"error","error":{"type":"not_found_error","message":"model: claude-old"}}`
			case a.auth == "Bearer sk-ant-first":
				return 401, `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}`
			}
			return 0, ""
		}}
		_, hc := pipeServer(t, prov)
		newer, err := recoilhttp.NewTarget("newer", "http://api.anthropic.test", nil, "claude-new")
		if err != nil {
			t.Fatal(err)
		}
		second, err := recoilhttp.NewTarget("second-key", "http://api.anthropic.test", http.Header{"Authorization": {"Bearer sk-ant-second"}}, "claude-new")
		if err != nil {
			t.Fatal(err)
		}
		p := sdkPolicy()
		p.Fallback = &recoil.Fallback{Targets: []recoil.Target{{Name: "primary"}, newer, second}}
		tr := &recoilhttp.Transport{Base: hc.Transport, Policy: p}
		client := anthropic.NewClient(
			aoption.WithAPIKey("sk-ant-first"),
			aoption.WithBaseURL("http://api.anthropic.test"),
			aoption.WithHTTPClient(&http.Client{Transport: tr}),
			aoption.WithMaxRetries(0),
		)
		msg, err := client.Messages.New(t.Context(), anthropic.MessageNewParams{
			Model:     "claude-old",
			MaxTokens: 64,
			Messages:  []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("Say hello"))},
		})
		if err != nil {
			t.Fatal(err)
		}
		if msg.Model != "claude-new" {
			t.Errorf("answered by %q, want claude-new", msg.Model)
		}
		want := []string{
			"api.anthropic.test/v1/messages claude-old Bearer sk-ant-first",
			"api.anthropic.test/v1/messages claude-new Bearer sk-ant-first",
			"api.anthropic.test/v1/messages claude-new Bearer sk-ant-second",
		}
		if got := prov.attempts(); strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("the provider saw\n\t%s\nwant\n\t%s", strings.Join(got, "\n\t"), strings.Join(want, "\n\t"))
		}
	})
}
