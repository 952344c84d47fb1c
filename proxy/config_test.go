package proxy

import (
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/recoil-go/recoil/tools/policyspec"
)

var testEnv = env(map[string]string{
	"ANTHROPIC_API_KEY": "sk-ant-test", "OPENAI_API_KEY": "sk-oai-test", "WEB_TOKEN": "web-token-0123456789abcdef",
})

func TestParseExample(t *testing.T) {
	c, err := Load("testdata/proxy.yaml")
	if err != nil {
		t.Fatal(err)
	}
	c.Getenv = testEnv
	if err := c.check(); err != nil {
		t.Fatal(err)
	}
	if got, want := len(c.Routes), 2; got != want {
		t.Fatalf("routes = %d, want %d", got, want)
	}
	r := c.Routes[0]
	if r.Policy == nil || r.Policy.Breaker == nil || r.Policy.IdleTimeout != 20*time.Second {
		t.Errorf("route 0 policy = %+v, want careful's", r.Policy)
	}
	if r.Targets[1].key != "sk-bedrock-test-key" || r.Targets[1].Breaker == nil || r.Targets[1].Region != "eu" {
		t.Errorf("target 1 = %+v", r.Targets[1])
	}
	if r.Targets[0].AuthHeader != "x-api-key" || c.Routes[1].Targets[0].AuthHeader != "authorization" {
		t.Errorf("auth headers = %q, %q", r.Targets[0].AuthHeader, c.Routes[1].Targets[0].AuthHeader)
	}
	if c.Routes[1].Policy.Hedge == nil || c.Routes[1].Policy.MaxAttempts != 2 {
		t.Errorf("route 1 policy = %+v", c.Routes[1].Policy)
	}
	if c.Clients[1].token != "batch-token-0123456789abcdef" || c.Clients[1].IdempotencyScope != "jobs" || c.Clients[0].IdempotencyScope != "web" {
		t.Errorf("clients = %+v", c.Clients)
	}
	if c.Fleet == nil || c.Fleet.Replicas != 2 || !c.Fleet.RetryBudget {
		t.Errorf("fleet = %+v", c.Fleet)
	}
}

func TestConfigErrors(t *testing.T) {
	for _, tc := range []struct {
		name, yaml, want string
	}{
		{"unknown field", "listen: 127.0.0.1:1\nlisten_on: x\n", "c.yaml:2: listen_on: unknown field"},
		{"twice", "listen: a:1\nlisten: b:2\n", "c.yaml:2: listen: given twice"},
		{"wrong type", "max_body: lots\n", "c.yaml:1: max_body: cannot unmarshal"},
		{"bad duration", "retry_memory: soon\n", "c.yaml:1: retry_memory:"},
		{"syntax", "routes: [\n", "c.yaml:"},
		{"policy field", "routes:\n  - model: m\n    policy: {max_attempts: -1}\n    targets: [{base_url: http://x}]\n", "c.yaml:3: routes[0].policy.max_attempts"},
		{"policy renamed field", "policies:\n  p: {attempts: 3}\n", "c.yaml:2: policies[p].attempts"},
		{"target field", "routes:\n  - model: m\n    targets:\n      - {base_url: http://x, key: k}\n", "c.yaml:4: routes[0].targets[0].key: unknown field"},
		{"target breaker", "routes:\n  - model: m\n    targets:\n      - base_url: http://x\n        breaker: {failures: 3}\n", "c.yaml:5: routes[0].targets[0].breaker.failures"},
		{"no model", "routes:\n  - targets: [{base_url: http://x}]\n", "c.yaml:2: routes[0].model: required"},
		{"no targets", "routes:\n  - model: m\n", "c.yaml:2: routes[0].targets: at least one target"},
		{"bad url", "routes:\n  - model: m\n    targets:\n      - base_url: ftp://x\n", "c.yaml:4: routes[0].targets[0].base_url"},
		{"key in url", "routes:\n  - model: m\n    targets:\n      - base_url: https://u:p@x\n", "credentials in the URL"},
		{"missing env", "routes:\n  - model: m\n    targets:\n      - {base_url: http://x, api_key_env: NOPE}\n", "c.yaml:4: routes[0].targets[0].api_key_env: NOPE is not set"},
		{"duplicate model", "routes:\n  - {model: m, targets: [{base_url: http://x}]}\n  - {model: m, targets: [{base_url: http://y}]}\n", "c.yaml:3: routes[1].model: \"m\" is already routed by routes[0]"},
		{"route fallback", "routes:\n  - model: m\n    policy: {fallback: {targets: [a]}}\n    targets: [{base_url: http://x}]\n", "routes[0].policy.fallback"},
		{"unknown policy", "routes:\n  - {model: m, policy: nope, targets: [{base_url: http://x}]}\n", "c.yaml:2: routes[0].policy: \"nope\" is neither"},
		{"public", "listen: 0.0.0.0:8787\n", "c.yaml:1: listen: 0.0.0.0:8787 is not loopback"},
		{"short token", "clients:\n  - {name: a, token_env: SHORT}\n", "c.yaml:2: clients[0].token_env: the token is 3 bytes"},
		{"no token", "clients:\n  - {name: a}\n", "clients[0].token_env: a client needs"},
		{"priority", "clients:\n  - {name: a, token_env: WEB_TOKEN, priority: urgent}\n", "c.yaml:2: clients[0].priority"},
		{"allowance", "clients:\n  - {name: a, token_env: WEB_TOKEN, allowance: {limit: 0}}\n", "clients[0].allowance: limit must be positive"},
		{"fleet", "fleet: {replicas: 2}\n", "c.yaml:1: fleet.redis: required"},
		{"second document", "listen: a:1\n---\nlisten: b:2\n", "c.yaml:2: a second YAML document"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Parse("c.yaml", []byte(tc.yaml))
			if err == nil {
				c.Getenv = env(map[string]string{"SHORT": "abc", "WEB_TOKEN": "web-token-0123456789abcdef"})
				err = c.check()
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error = %v, want one containing %q", err, tc.want)
			}
			var pe *policyspec.Error
			if !errors.As(err, &pe) {
				t.Errorf("error %T is not a *policyspec.Error", err)
			}
		})
	}
}

func TestEmptyConfigIsTheDefault(t *testing.T) {
	for _, src := range []string{"", "# nothing\n", "~\n"} {
		c, err := Parse("e.yaml", []byte(src))
		if err != nil {
			t.Fatalf("%q: %v", src, err)
		}
		c.Getenv = env(map[string]string{"OPENAI_BASE_URL": "http://127.0.0.1:9/v1"})
		if err := c.check(); err != nil {
			t.Fatalf("%q: %v", src, err)
		}
		if c.Listen != DefaultListen || len(c.Routes) != 2 || c.Routes[0].Targets[0].BaseURL != "http://127.0.0.1:9/v1" ||
			c.Routes[1].Targets[0].BaseURL != DefaultAnthropicBaseURL {
			t.Errorf("%q: %+v", src, c)
		}
	}
}

func FuzzParse(f *testing.F) {
	b, err := os.ReadFile("testdata/proxy.yaml")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	f.Add([]byte("routes: [{model: m, targets: [{base_url: http://x}]}]"))
	f.Add([]byte("a: &a [*a, *a]"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Parse("f.yaml", data)
		if err != nil {
			var pe *policyspec.Error
			if !errors.As(err, &pe) {
				t.Fatalf("error %T is not a *policyspec.Error: %v", err, err)
			}
			return
		}
		c.Getenv = func(string) string { return "" }
		_ = c.check()
	})
}

func TestScanModel(t *testing.T) {
	for _, tc := range []struct {
		body, model string
		valid       bool
	}{
		{`{"model":"gpt-4o","messages":[]}`, "gpt-4o", true},
		{` { "messages" : [ {"model":"inner"} ], "model" : "outer" } `, "outer", true},
		{`{"x":{"model":"no"},"y":"\"model\":","model":"yes"}`, "yes", true},
		{`{"model":"a\u00e9"}`, "aé", true},
		{`{"model":7}`, "", true},
		{`[{"model":"x"}]`, "", true},
		{`{"model":"x"`, "", false},
		{`not json`, "", false},
	} {
		model, valid := scanModel([]byte(tc.body))
		if model != tc.model || valid != tc.valid {
			t.Errorf("scanModel(%s) = %q, %v; want %q, %v", tc.body, model, valid, tc.model, tc.valid)
		}
	}
}

func FuzzScanModel(f *testing.F) {
	f.Add([]byte(`{"model":"gpt-4o","messages":[{"role":"user","content":"hi"}]}`))
	f.Add([]byte(`{"a":[1,2,{"b":"}"}],"model":"m"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		_, _ = scanModel(data)
	})
}
