package recoilhttp

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

func TestNewEndpointRejects(t *testing.T) {
	for _, base := range []string{"", "api.openai.com/v1", "ftp://host/v1", "http://", "https://user:secret@host/v1", "http://[::1"} {
		if _, err := NewEndpoint(base, nil, ""); err == nil {
			t.Errorf("NewEndpoint(%q) = nil error, want one", base)
		} else if strings.Contains(err.Error(), "secret") {
			t.Errorf("NewEndpoint(%q) = %v: the error repeats the password", base, err)
		}
	}
}

// TestEndpointRoute: where an attempt goes and what it carries, for a
// request its caller made for the first target.
func TestEndpointRoute(t *testing.T) {
	first, _ := NewEndpoint("https://api.openai.com/v1/", nil, "")
	tests := []struct {
		name        string
		base        string
		header      http.Header
		model       string
		url         string
		wantURL     string
		wantAuth    string
		wantKey     string
		wantBody    string
		wantVersion string
	}{
		{name: "same origin keeps the caller's credentials", base: "https://api.openai.com/v1", url: "https://api.openai.com/v1/chat/completions",
			wantURL: "https://api.openai.com/v1/chat/completions", wantAuth: "Bearer caller", wantKey: "caller-key", wantBody: `{"model":"gpt-4o","n":1}`},
		{name: "another origin never sees them", base: "https://llm.internal/openai/v1", url: "https://api.openai.com/v1/chat/completions",
			wantURL: "https://llm.internal/openai/v1/chat/completions", wantBody: `{"model":"gpt-4o","n":1}`},
		{name: "the target's own credentials replace them", base: "https://eu.api.test/v1", header: http.Header{"authorization": {"Bearer eu"}},
			url: "https://api.openai.com/v1/chat/completions", wantURL: "https://eu.api.test/v1/chat/completions", wantAuth: "Bearer eu", wantBody: `{"model":"gpt-4o","n":1}`},
		{name: "another scheme is another origin", base: "http://api.openai.com/v1", url: "https://api.openai.com/v1/chat/completions",
			wantURL: "http://api.openai.com/v1/chat/completions", wantBody: `{"model":"gpt-4o","n":1}`},
		{name: "the model is rewritten, every other byte kept", base: "https://api.openai.com/v1", model: "gpt-4o-mini",
			url: "https://api.openai.com/v1/chat/completions", wantURL: "https://api.openai.com/v1/chat/completions",
			wantAuth: "Bearer caller", wantKey: "caller-key", wantBody: `{"model":"gpt-4o-mini","n":1}`},
		{name: "a base query is added (Azure's api-version)", base: "https://res.openai.azure.com/openai/deployments/d1?api-version=2024-10-21",
			url: "https://api.openai.com/v1/chat/completions?x=1", wantURL: "https://res.openai.azure.com/openai/deployments/d1/chat/completions?api-version=2024-10-21&x=1",
			wantBody: `{"model":"gpt-4o","n":1}`, wantVersion: "2024-10-21"},
		{name: "a path outside the first base is kept whole", base: "https://other.test/proxy", url: "https://api.openai.com/health",
			wantURL: "https://other.test/proxy/health", wantBody: `{"model":"gpt-4o","n":1}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ep, err := NewEndpoint(tt.base, tt.header, tt.model)
			if err != nil {
				t.Fatal(err)
			}
			body := []byte(`{"model":"gpt-4o","n":1}`)
			req, _ := http.NewRequest(http.MethodPost, tt.url, bytes.NewReader(body))
			req.Header.Set("Authorization", "Bearer caller")
			req.Header.Set("X-Api-Key", "caller-key")
			req.Header.Set("Cookie", "session=caller")
			out := req.Clone(req.Context())
			ep.route(out, req, first, body)
			if got := out.URL.String(); got != tt.wantURL {
				t.Errorf("URL = %s, want %s", got, tt.wantURL)
			}
			if got := out.Header.Get("Authorization"); got != tt.wantAuth {
				t.Errorf("Authorization = %q, want %q", got, tt.wantAuth)
			}
			if got := out.Header.Get("X-Api-Key"); got != tt.wantKey {
				t.Errorf("X-Api-Key = %q, want %q", got, tt.wantKey)
			}
			if tt.wantAuth == "" && out.Header.Get("Cookie") != "" {
				t.Errorf("the caller's cookie went to %s", out.URL.Host)
			}
			b, _ := io.ReadAll(out.Body)
			if string(b) != tt.wantBody || out.ContentLength != int64(len(tt.wantBody)) {
				t.Errorf("body %q (Content-Length %d), want %q", b, out.ContentLength, tt.wantBody)
			}
			if req.URL.String() != tt.url || req.Header.Get("Authorization") != "Bearer caller" {
				t.Errorf("the caller's request was changed: %s %v", req.URL, req.Header)
			}
		})
	}
}

func TestWithModel(t *testing.T) {
	tests := []struct{ in, want string }{
		{`{"model":"a","messages":[]}`, `{"model":"b","messages":[]}`},
		{`{ "messages": [{"model":"nested"}], "model" : "a" }`, `{ "messages": [{"model":"nested"}], "model" : "b" }`},
		{`{"model":null}`, `{"model":"b"}`},
		{`{"messages":[]}`, `{"messages":[]}`}, // no model: left alone
		{`[{"model":"a"}]`, `[{"model":"a"}]`}, // not an object
		{`{"model":"a"`, `{"model":"b"`},       // the value is whole: only it is replaced
		{`{"model":`, `{"model":`},             // broken before the value: left alone
		{`not json`, `not json`},
		{"", ""},
		{`{"model":"\u00e9t\u00e9","x":"\xff"}`, `{"model":"b","x":"\xff"}`},
	}
	for _, tt := range tests {
		if got := withModel([]byte(tt.in), "b"); string(got) != tt.want {
			t.Errorf("withModel(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// FuzzWithModel: whatever the body, the rewrite never panics, changes
// nothing but the top-level model's value, and leaves a JSON object
// valid, naming the new model.
func FuzzWithModel(f *testing.F) {
	for _, s := range []string{`{"model":"a","messages":[]}`, `{"a":{"model":1},"model":[1,2]}`, `{"model":"a"`, `[]`, `{}`, `{"model":"a","model":"c"}`} {
		f.Add([]byte(s), "gpt-4o-mini")
	}
	f.Fuzz(func(t *testing.T, body []byte, model string) {
		got := withModel(body, model)
		if !json.Valid(body) {
			return
		}
		var in, out map[string]json.RawMessage
		if json.Unmarshal(body, &in) != nil {
			if !bytes.Equal(got, body) {
				t.Fatalf("withModel changed a body that is not an object: %q -> %q", body, got)
			}
			return
		}
		if err := json.Unmarshal(got, &out); err != nil {
			t.Fatalf("withModel(%q) = %q, not valid JSON: %v", body, got, err)
		}
		if _, ok := in["model"]; !ok {
			if !bytes.Equal(got, body) {
				t.Fatalf("withModel changed a body without a model: %q -> %q", body, got)
			}
			return
		}
		for k, v := range in {
			if k != "model" && !bytes.Equal(out[k], v) {
				t.Fatalf("withModel changed %q: %q -> %q", k, v, out[k])
			}
		}
	})
}
