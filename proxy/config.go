package proxy

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/recoil-go/recoil/tools/policyspec"
)

// Protocols a route's clients and targets speak.
const (
	// OpenAI is the OpenAI-compatible API: /v1/chat/completions,
	// /v1/responses, /v1/embeddings and the rest, a bearer key. Its base
	// URLs end in /v1, as OPENAI_BASE_URL does.
	OpenAI = "openai"
	// Anthropic is the Messages API: /v1/messages, an x-api-key header.
	// Its base URLs stop before /v1, as ANTHROPIC_BASE_URL does.
	Anthropic = "anthropic"
)

// Defaults for a Config's zero fields.
const (
	// DefaultListen is where a proxy with no Listen accepts connections:
	// loopback only, so that a proxy started with no configuration serves
	// nobody but the machine it runs on.
	DefaultListen = "127.0.0.1:8787"
	// DefaultMaxBody bounds a request body: far above any prompt a model
	// accepts as JSON (images included), far below what would let one
	// client exhaust the proxy's memory.
	DefaultMaxBody = 32 << 20
	// DefaultOpenAIBaseURL and DefaultAnthropicBaseURL are the public APIs,
	// the base URLs the official SDKs use when OPENAI_BASE_URL and
	// ANTHROPIC_BASE_URL are unset.
	DefaultOpenAIBaseURL    = "https://api.openai.com/v1"
	DefaultAnthropicBaseURL = "https://api.anthropic.com"
	// DefaultRetryMemory is how long the proxy remembers a failed request,
	// to charge an SDK's retry of it to the same budget: longer than any
	// SDK's backoff between its attempts.
	DefaultRetryMemory = 10 * time.Minute
)

// Wildcard as a route's Model makes it the route for every model its
// protocol's clients name that no other route names.
const Wildcard = "*"

// Config is the proxy's configuration: where it listens, who may use it,
// where each model's requests go and under which policy. The zero Config is
// what `recoil-proxy` runs with no file: loopback, no client tokens, the
// two routes Defaults makes from the SDKs' environment variables. A Config
// is a plain value; New reads it and keeps no reference to it.
type Config struct {
	// Listen is the address to accept connections on; empty means
	// DefaultListen. An address that is not loopback needs Clients, or
	// InsecureNoClientAuth.
	Listen string `yaml:"listen"`
	// InsecureNoClientAuth lets a proxy listening beyond loopback serve
	// without client tokens: anyone who reaches the port spends the
	// provider keys. Named so that nobody sets it by accident.
	InsecureNoClientAuth bool `yaml:"insecure_no_client_auth"`
	// MaxBody bounds a request body, in bytes; zero means DefaultMaxBody.
	// A longer body is answered 413 before any provider is called.
	MaxBody int64 `yaml:"max_body"`
	// RetryMemory is how long a failed request is remembered, so that an
	// SDK's retry of it is charged to its budget; zero means
	// DefaultRetryMemory.
	RetryMemory time.Duration `yaml:"retry_memory"`
	// Routes send the models clients name to targets. Empty means the
	// two routes of Defaults.
	Routes []Route `yaml:"routes"`
	// Policies are named policies in the policy language, for routes to
	// name.
	Policies map[string]policyspec.Spec `yaml:"-"`
	// Clients are who may use the proxy; empty means anyone who can reach
	// it (loopback only, unless InsecureNoClientAuth).
	Clients []Client `yaml:"clients"`
	// Fleet, if set, shares allowances and retry budgets across replicas
	// through Redis; nil keeps them in process.
	Fleet *Fleet `yaml:"fleet"`

	// Getenv reads the environment for credentials and the default
	// routes; nil means os.Getenv. Tests set it.
	Getenv func(string) string `yaml:"-"`
	// File names the configuration file in errors; empty for a Config
	// built in Go.
	File string `yaml:"-"`

	pos policyspec.Pos
}

// Route is where the requests for one model go: an ordered list of
// targets, tried under one policy (recoil.Fallback; recoil.Hedge when the
// policy hedges).
type Route struct {
	// Model is the model name clients ask for (the request body's
	// "model"), or Wildcard for every model of Protocol no other route
	// names. Required.
	Model string `yaml:"model"`
	// Aliases are other names clients may ask for the same route by.
	Aliases []string `yaml:"aliases"`
	// Protocol is OpenAI (the default) or Anthropic: what the route's
	// clients and targets speak. The proxy does not translate.
	Protocol string `yaml:"protocol"`
	// Policy is the route's retry policy, in the policy language; nil
	// means recoil's default policy. It may not have a fallback: the
	// targets are the route's.
	Policy *policyspec.Spec `yaml:"-"`
	// PolicyName names one of Config.Policies, or a preset, instead.
	PolicyName string `yaml:"-"`
	// Targets are tried in order; at least one.
	Targets []Target `yaml:"targets"`
	// Cooldown is how long an overloaded or rate-limited target is passed
	// over; zero means recoil.DefaultCooldown.
	Cooldown time.Duration `yaml:"cooldown"`
	// Allowance, if set, is the route's rate allowance at the provider,
	// shared by the fleet: every attempt is charged to it.
	Allowance *Allowance `yaml:"allowance"`

	pos policyspec.Pos
}

// Target is one upstream of a route: a provider, a key, a region, a
// self-hosted server.
type Target struct {
	// Name names the target on the page, in metrics and in log lines;
	// empty means "target N".
	Name string `yaml:"name"`
	// BaseURL is the provider's base URL in its SDK's convention
	// (https://api.openai.com/v1, https://api.anthropic.com). Required.
	BaseURL string `yaml:"base_url"`
	// APIKeyEnv names the environment variable holding the provider key.
	APIKeyEnv string `yaml:"api_key_env"`
	// APIKeyFile names a file holding the provider key (a mounted
	// secret); surrounding white space is dropped.
	APIKeyFile string `yaml:"api_key_file"`
	// AuthHeader is the header the key is sent in: "authorization" (a
	// bearer token, OpenAI's), "x-api-key" (Anthropic's) or "api-key"
	// (Azure OpenAI's); empty means the protocol's.
	AuthHeader string `yaml:"auth_header"`
	// Model is the model name sent to this target in place of the one the
	// client asked for; empty sends the client's.
	Model string `yaml:"model"`
	// MaxContext is the longest input the target accepts, in tokens; zero
	// means unknown. A request refused as too long moves only to a target
	// with more.
	MaxContext int `yaml:"max_context"`
	// Region is where the target runs, shown on the page and in logs.
	Region string `yaml:"region"`
	// Breaker, if set, is the target's own circuit breaker.
	Breaker *policyspec.Breaker `yaml:"-"`

	key string // resolved credential
	pos policyspec.Pos
}

// Client is one caller allowed to use the proxy.
type Client struct {
	// Name names the client in logs, metrics and the page. Required.
	Name string `yaml:"name"`
	// TokenEnv and TokenFile say where the client's token is; one of them
	// is required. The client sends it as its SDK's API key.
	TokenEnv  string `yaml:"token_env"`
	TokenFile string `yaml:"token_file"`
	// Priority is "interactive" (the default) or "background": background
	// calls yield to interactive ones in a limiter that orders by priority
	// and in a fleet allowance with a reserve.
	Priority string `yaml:"priority"`
	// Allowance, if set, bounds the client's requests (or tokens).
	Allowance *Allowance `yaml:"allowance"`
	// IdempotencyScope is the scope the client's retries are recognised
	// in; empty means the client's Name. Clients sharing a scope share
	// retries of one request (one service's replicas, say).
	IdempotencyScope string `yaml:"idempotency_scope"`

	token string
	pos   policyspec.Pos
}

// Allowance is a rate allowance: Limit units per Window.
type Allowance struct {
	// Limit is the units per Window. Required.
	Limit int64 `yaml:"limit"`
	// Window is Limit's period; zero means a minute.
	Window time.Duration `yaml:"window"`
	// Unit is "requests" (the default) or "tokens".
	Unit string `yaml:"unit"`
	// Reserved is the share, in [0, 1), kept for interactive clients.
	Reserved float64 `yaml:"reserved"`
}

// Fleet shares the proxy's allowances and retry budgets among replicas
// through Redis (package fleet).
type Fleet struct {
	// Redis is the address of a Redis server (host:port), or several
	// comma-separated for a Redis Cluster. Required.
	Redis string `yaml:"redis"`
	// Prefix begins every key; empty means fleet.DefaultPrefix.
	Prefix string `yaml:"prefix"`
	// Replicas is how many proxies share the allowances: while Redis is
	// away each decides from 1/Replicas of them. Zero means 1.
	Replicas int `yaml:"replicas"`
	// Timeout bounds each Redis call; zero means fleet.DefaultTimeout.
	Timeout time.Duration `yaml:"timeout"`
	// RetryBudget shares each route's retry budget across the fleet (a
	// fleet budget.Share) instead of each replica keeping its own.
	RetryBudget bool `yaml:"retry_budget"`

	pos policyspec.Pos
}

// same reports whether f and g configure the same fleet.
func (f *Fleet) same(g *Fleet) bool {
	return f.Redis == g.Redis && f.Prefix == g.Prefix && f.Replicas == g.Replicas &&
		f.Timeout == g.Timeout && f.RetryBudget == g.RetryBudget
}

func (c *Config) getenv(k string) string {
	if c.Getenv != nil {
		return c.Getenv(k)
	}
	return os.Getenv(k)
}

// Defaults returns the routes a Config without any has: every OpenAI
// request to OPENAI_BASE_URL with OPENAI_API_KEY, every Anthropic request
// to ANTHROPIC_BASE_URL with ANTHROPIC_API_KEY — the variables the
// official SDKs read, and the public APIs when they are unset.
func Defaults(getenv func(string) string) []Route {
	if getenv == nil {
		getenv = os.Getenv
	}
	or := func(k, def string) string {
		if v := getenv(k); v != "" {
			return v
		}
		return def
	}
	return []Route{
		{Model: Wildcard, Protocol: OpenAI, Targets: []Target{{
			Name: "openai", BaseURL: or("OPENAI_BASE_URL", DefaultOpenAIBaseURL), APIKeyEnv: "OPENAI_API_KEY"}}},
		{Model: Wildcard, Protocol: Anthropic, Targets: []Target{{
			Name: "anthropic", BaseURL: or("ANTHROPIC_BASE_URL", DefaultAnthropicBaseURL), APIKeyEnv: "ANTHROPIC_API_KEY"}}},
	}
}

// IsLoopback reports whether addr (host:port) listens on loopback only.
// An empty host ("":8787) listens everywhere and is not loopback.
func IsLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// check validates c in place, resolving credentials, and returns an
// *policyspec.Error for the first problem.
func (c *Config) check() error {
	if c.Listen == "" {
		c.Listen = DefaultListen
	}
	top := c.pos
	top.File = c.File
	if _, _, err := net.SplitHostPort(c.Listen); err != nil {
		return errAt(top, "listen", "%v", err)
	}
	if !IsLoopback(c.Listen) && len(c.Clients) == 0 && !c.InsecureNoClientAuth {
		return errAt(top, "listen", "%s is not loopback: name clients (with tokens), "+
			"or set insecure_no_client_auth: true to let anyone who reaches it spend the provider keys", c.Listen)
	}
	if c.MaxBody < 0 {
		return errAt(top, "max_body", "must not be negative")
	}
	if c.MaxBody == 0 {
		c.MaxBody = DefaultMaxBody
	}
	if c.RetryMemory <= 0 {
		c.RetryMemory = DefaultRetryMemory
	}
	if len(c.Routes) == 0 {
		c.Routes = Defaults(c.getenv)
		for i := range c.Routes {
			c.Routes[i].pos = policyspec.Pos{File: "(default route)", Path: "routes[" + c.Routes[i].Protocol + "]"}
		}
	}
	if err := c.checkRoutes(); err != nil {
		return err
	}
	if err := c.checkClients(); err != nil {
		return err
	}
	if c.Fleet != nil && strings.TrimSpace(c.Fleet.Redis) == "" {
		return errAt(c.Fleet.pos, "fleet.redis", "required")
	}
	if c.Fleet != nil && c.Fleet.Replicas < 0 {
		return errAt(c.Fleet.pos, "fleet.replicas", "must not be negative")
	}
	return nil
}

func (c *Config) checkRoutes() error {
	seen := map[string]string{}
	for i := range c.Routes {
		r := &c.Routes[i]
		at := func(field, format string, args ...any) error {
			return errAt(r.pos, join(fmt.Sprintf("routes[%d]", i), field), format, args...)
		}
		switch r.Protocol {
		case "":
			r.Protocol = OpenAI
		case OpenAI, Anthropic:
		default:
			return at("protocol", "%q is not openai or anthropic", r.Protocol)
		}
		if r.Model == "" {
			return at("model", "required (a model name, or %q for every model)", Wildcard)
		}
		for _, m := range append([]string{r.Model}, r.Aliases...) {
			k := r.Protocol + "\x00" + m
			if prev, ok := seen[k]; ok {
				return at("model", "%q is already routed by %s", m, prev)
			}
			seen[k] = fmt.Sprintf("routes[%d]", i)
		}
		if len(r.Targets) == 0 {
			return at("targets", "at least one target")
		}
		if r.Policy != nil && r.Policy.Fallback != nil {
			return at("policy.fallback", "a route's targets are its fallback: list them under targets")
		}
		if r.PolicyName != "" && r.Policy == nil {
			s, ok := c.Policies[r.PolicyName]
			if !ok {
				p, err := policyspec.Preset(r.PolicyName)
				if err != nil {
					return at("policy", "%q is neither under policies nor a preset", r.PolicyName)
				}
				s = p
			}
			if s.Fallback != nil {
				return at("policy", "policy %q has a fallback: a route's targets are its fallback", r.PolicyName)
			}
			r.Policy = &s
		}
		if err := checkAllowance(r.Allowance); err != nil {
			return at("allowance", "%v", err)
		}
		names := map[string]bool{}
		for j := range r.Targets {
			t := &r.Targets[j]
			if t.Name == "" {
				t.Name = fmt.Sprintf("target %d", j+1)
			}
			if names[t.Name] {
				return errAt(t.posOr(r.pos), fmt.Sprintf("routes[%d].targets[%d].name", i, j), "%q is given twice", t.Name)
			}
			names[t.Name] = true
			if err := c.checkTarget(r, t); err != nil {
				return errAt(t.posOr(r.pos), fmt.Sprintf("routes[%d].targets[%d].%s", i, j, err.field), "%v", err.err)
			}
		}
	}
	return nil
}

type fieldErr struct {
	field string
	err   error
}

func (c *Config) checkTarget(r *Route, t *Target) *fieldErr {
	u, err := url.Parse(t.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return &fieldErr{"base_url", fmt.Errorf("%q is not an http or https URL with a host", t.BaseURL)}
	}
	if u.User != nil {
		return &fieldErr{"base_url", errors.New("credentials in the URL would reach logs: use api_key_env or api_key_file")}
	}
	switch strings.ToLower(t.AuthHeader) {
	case "":
		t.AuthHeader = "authorization"
		if r.Protocol == Anthropic {
			t.AuthHeader = "x-api-key"
		}
	case "authorization", "x-api-key", "api-key":
		t.AuthHeader = strings.ToLower(t.AuthHeader)
	default:
		return &fieldErr{"auth_header", fmt.Errorf("%q is not authorization, x-api-key or api-key", t.AuthHeader)}
	}
	if t.APIKeyEnv != "" && t.APIKeyFile != "" {
		return &fieldErr{"api_key_file", errors.New("give api_key_env or api_key_file, not both")}
	}
	if t.MaxContext < 0 {
		return &fieldErr{"max_context", errors.New("must not be negative")}
	}
	switch {
	case t.APIKeyFile != "":
		b, err := os.ReadFile(t.APIKeyFile)
		if err != nil {
			return &fieldErr{"api_key_file", err}
		}
		t.key = strings.TrimSpace(string(b))
		if t.key == "" {
			return &fieldErr{"api_key_file", fmt.Errorf("%s is empty", t.APIKeyFile)}
		}
	case t.APIKeyEnv != "":
		// A default route whose variable is unset forwards without a key
		// (a local server needs none); a configured one must have it.
		t.key = c.getenv(t.APIKeyEnv)
		if t.key == "" && r.pos.Line != 0 {
			return &fieldErr{"api_key_env", fmt.Errorf("%s is not set", t.APIKeyEnv)}
		}
	}
	return nil
}

func (t *Target) posOr(p policyspec.Pos) policyspec.Pos {
	if t.pos.Line != 0 {
		return t.pos
	}
	return p
}

func checkAllowance(a *Allowance) error {
	if a == nil {
		return nil
	}
	switch {
	case a.Limit <= 0:
		return errors.New("limit must be positive")
	case a.Window < 0:
		return errors.New("window must not be negative")
	case a.Reserved < 0 || a.Reserved >= 1:
		return errors.New("reserved must be in [0, 1)")
	}
	switch a.Unit {
	case "", "requests", "tokens":
	default:
		return fmt.Errorf("unit %q is not requests or tokens", a.Unit)
	}
	return nil
}

func (c *Config) checkClients() error {
	names := map[string]bool{}
	tokens := map[string]string{}
	for i := range c.Clients {
		cl := &c.Clients[i]
		at := func(field, format string, args ...any) error {
			return errAt(cl.pos, join(fmt.Sprintf("clients[%d]", i), field), format, args...)
		}
		if cl.Name == "" {
			return at("name", "required")
		}
		if names[cl.Name] {
			return at("name", "%q is given twice", cl.Name)
		}
		names[cl.Name] = true
		switch {
		case cl.TokenEnv != "" && cl.TokenFile != "":
			return at("token_file", "give token_env or token_file, not both")
		case cl.TokenFile != "":
			b, err := os.ReadFile(cl.TokenFile)
			if err != nil {
				return at("token_file", "%v", err)
			}
			cl.token = strings.TrimSpace(string(b))
		case cl.TokenEnv != "":
			cl.token = c.getenv(cl.TokenEnv)
			if cl.token == "" {
				return at("token_env", "%s is not set", cl.TokenEnv)
			}
		default:
			return at("token_env", "a client needs token_env or token_file")
		}
		if len(cl.token) < 16 {
			return at("token_env", "the token is %d bytes: use at least 16 random bytes", len(cl.token))
		}
		if prev, ok := tokens[cl.token]; ok {
			return at("token_env", "the same token as client %q", prev)
		}
		tokens[cl.token] = cl.Name
		switch cl.Priority {
		case "", policyspec.PriorityInteractive, policyspec.PriorityBackground:
		default:
			return at("priority", "%q is not interactive or background", cl.Priority)
		}
		if err := checkAllowance(cl.Allowance); err != nil {
			return at("allowance", "%v", err)
		}
		if cl.IdempotencyScope == "" {
			cl.IdempotencyScope = cl.Name
		}
	}
	return nil
}

func join(parent, field string) string {
	if field == "" {
		return parent
	}
	if parent == "" {
		return field
	}
	return parent + "." + field
}

// errAt returns the *policyspec.Error for field at p: the line p recorded
// for the field's last component, or p's own line.
func errAt(p policyspec.Pos, field, format string, args ...any) error {
	line := p.Line
	if k := field[strings.LastIndexByte(field, '.')+1:]; p.Lines != nil {
		if l, ok := p.Lines[k]; ok {
			line = l
		}
	}
	file := p.File
	return &policyspec.Error{File: file, Line: line, Field: field, Err: fmt.Errorf(format, args...)}
}
