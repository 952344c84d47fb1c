package proxy

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/recoil-go/recoil"
	"github.com/recoil-go/recoil/fleet"
	"github.com/recoil-go/recoil/hop"
	"github.com/recoil-go/recoil/recoilhttp"
	"github.com/redis/go-redis/v9"
)

// Options wires a Proxy to what lives outside its configuration.
type Options struct {
	// Logger receives one line per logical call (the access log) and the
	// proxy's warnings; nil means none.
	Logger *slog.Logger
	// Base sends every attempt; nil means a transport of the proxy's own,
	// with keep-alive connections enough for many calls in flight.
	Base http.RoundTripper
	// Metrics, if set, receives the proxy's Prometheus metrics.
	Metrics *Metrics
	// Trace, if set, is given each route's Transport once, before first
	// use, and returns the RoundTripper the route sends through instead:
	// recoilotel.NewTransport, for one OpenTelemetry span per attempt
	// under the caller's trace. This package does not import
	// OpenTelemetry (the recoil-proxy command does); a program that
	// embeds the proxy and wants traces passes func(t
	// *recoilhttp.Transport) http.RoundTripper { return
	// recoilotel.NewTransport(t) }.
	Trace func(*recoilhttp.Transport) http.RoundTripper
	// Redis, if set, is the fleet's client in place of one the proxy
	// would make from Config.Fleet (tests; a client with options of your
	// own). It must have ContextTimeoutEnabled.
	Redis redis.UniversalClient
}

// Proxy is the engine in front of any language's model SDK: an
// http.Handler that forwards OpenAI- and Anthropic-compatible requests to
// their routes' targets under one retry policy per route, as the one retry
// layer of the chain (see docs/proxy.md). Make one with New; it is safe
// for concurrent use. Close it to return the fleet's leases.
type Proxy struct {
	cfg     Config
	log     *slog.Logger
	base    http.RoundTripper
	metrics *Metrics
	trace   func(*recoilhttp.Transport) http.RoundTripper
	fleet   *fleet.Client
	ledger  *ledger
	table   atomic.Pointer[table]
	mu      sync.Mutex // serialises reloads
	started time.Time
}

// table is what a configuration makes: routes and clients, swapped whole on
// a reload while calls in flight keep the one they started with.
type table struct {
	byModel map[string]*route // protocol + "\x00" + model
	wild    map[string]*route // protocol → its wildcard route
	routes  []*route
	clients map[[32]byte]*client
	maxBody int64
}

type client struct {
	name, scope string
	background  bool
	allowance   *fleet.Allowance
	refused     atomic.Int64
}

// New returns a Proxy for cfg, checked as Parse describes (an
// *policyspec.Error names the file, line and field of a problem).
func New(cfg Config, opt Options) (*Proxy, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	p := &Proxy{cfg: cfg, log: opt.Logger, base: opt.Base, metrics: opt.Metrics, trace: opt.Trace, started: time.Now()}
	if p.base == nil {
		p.base = newBase()
	}
	fc := fleet.Config{Logger: opt.Logger}
	if f := cfg.Fleet; f != nil {
		fc.Prefix, fc.Replicas, fc.Timeout = f.Prefix, f.Replicas, f.Timeout
		fc.Redis = opt.Redis
		if fc.Redis == nil {
			fc.Redis = redis.NewUniversalClient(&redis.UniversalOptions{
				Addrs:                 strings.Split(f.Redis, ","),
				ContextTimeoutEnabled: true,
			})
		}
	}
	fl, err := fleet.New(fc)
	if err != nil {
		return nil, err
	}
	p.fleet = fl
	if p.metrics != nil {
		p.metrics.fleet(fl)
	}
	p.ledger = newLedger(cfg.RetryMemory)
	t, err := p.build(&p.cfg, nil)
	if err != nil {
		_ = fl.Close()
		return nil, err
	}
	p.table.Store(t)
	return p, nil
}

// newBase is the transport attempts go out on: net/http's defaults with
// room for many keep-alive connections to each provider.
func newBase() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns = 1024
	t.MaxIdleConnsPerHost = 256
	return t
}

// build makes the table cfg describes, keeping each route of old whose
// configuration is unchanged, with what it learned.
func (p *Proxy) build(cfg *Config, old *table) (*table, error) {
	t := &table{byModel: map[string]*route{}, wild: map[string]*route{}, clients: map[[32]byte]*client{}, maxBody: cfg.MaxBody}
	kept := map[string]*route{}
	if old != nil {
		for _, r := range old.routes {
			kept[r.ident] = r
		}
	}
	for i := range cfg.Routes {
		r := &cfg.Routes[i]
		rt, ok := kept[routeIdent(r)]
		if !ok {
			var err error
			if rt, err = p.buildRoute(r, p.base, p.fleet); err != nil {
				return nil, err
			}
		}
		t.routes = append(t.routes, rt)
		for _, m := range append([]string{r.Model}, r.Aliases...) {
			if m == Wildcard {
				t.wild[r.Protocol] = rt
			} else {
				t.byModel[r.Protocol+"\x00"+m] = rt
			}
		}
	}
	for i := range cfg.Clients {
		c := &cfg.Clients[i]
		cl := &client{name: c.Name, scope: c.IdempotencyScope, background: c.Priority == "background"}
		if a := c.Allowance; a != nil {
			al, err := p.fleet.Allowance(fleet.AllowanceConfig{Name: "client/" + c.Name, Unit: unitOf(a.Unit),
				Limit: a.Limit, Window: a.Window, Reserved: a.Reserved})
			if err != nil {
				return nil, err
			}
			cl.allowance = al
		}
		t.clients[sha256.Sum256([]byte(c.token))] = cl
	}
	return t, nil
}

// Reload replaces the configuration with cfg, as SIGHUP asks: calls in
// flight, streams included, finish under the configuration they began
// with; a route whose configuration is unchanged keeps its learned state
// (cool-downs, breakers, budgets, hedging latencies); the fleet connection
// and the memory of failed requests are kept. Listen, Fleet and
// InsecureNoClientAuth cannot change without a restart: a Reload that
// changes them is refused.
func (p *Proxy) Reload(cfg Config) error {
	if err := cfg.check(); err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case cfg.Listen != p.cfg.Listen:
		return errors.New("proxy: reload: listen changed: restart to move")
	case (cfg.Fleet == nil) != (p.cfg.Fleet == nil) || (cfg.Fleet != nil && !cfg.Fleet.same(p.cfg.Fleet)):
		return errors.New("proxy: reload: fleet changed: restart to reconnect")
	case cfg.InsecureNoClientAuth != p.cfg.InsecureNoClientAuth:
		return errors.New("proxy: reload: insecure_no_client_auth changed: restart to change it")
	}
	t, err := p.build(&cfg, p.table.Load())
	if err != nil {
		return err
	}
	p.cfg = cfg
	p.table.Store(t)
	return nil
}

// Close returns the fleet's leases and stops its probe. Calls in flight
// are the server's to drain first.
func (p *Proxy) Close() error { return p.fleet.Close() }

// Listen returns the address the configuration listens on.
func (p *Proxy) Listen() string { return p.cfg.Listen }

// protocolOf says which API a path belongs to.
func protocolOf(path string) (string, bool) {
	switch {
	case path == "/v1/messages" || strings.HasPrefix(path, "/v1/messages/") || path == "/v1/complete":
		return Anthropic, true
	case strings.HasPrefix(path, "/v1/"):
		return OpenAI, true
	}
	return "", false
}

// ServeHTTP answers one call: it authenticates the client, reads and
// checks the body, finds the route, and forwards under the route's policy.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	t := p.table.Load()
	c := &call{p: p, method: r.Method, path: r.URL.Path, idemKey: r.Header.Get("Idempotency-Key")}
	if p.log != nil {
		c.start = time.Now() // for the access log's elapsed, its only reader
	}
	proto, ok := protocolOf(r.URL.Path)
	if !ok {
		c.refuse(w, OpenAI, http.StatusNotFound, "not_found", "no API at this path: OpenAI's are under /v1/, Anthropic's at /v1/messages")
		return
	}
	c.proto = proto
	if len(t.clients) > 0 {
		cl := t.authenticate(r)
		if cl == nil {
			c.refuse(w, proto, http.StatusUnauthorized, "authentication_error", "unknown client token")
			return
		}
		c.cl = cl
	}
	if r.ContentLength > t.maxBody {
		c.refuse(w, proto, http.StatusRequestEntityTooLarge, "request_too_large", "the body is larger than the proxy's max_body")
		return
	}
	body, err := readBody(r.Body, r.ContentLength, t.maxBody)
	switch {
	case errors.Is(err, errTooLarge):
		c.refuse(w, proto, http.StatusRequestEntityTooLarge, "request_too_large", "the body is larger than the proxy's max_body")
		return
	case err != nil:
		c.refuse(w, proto, http.StatusBadRequest, "invalid_request_error", "reading the body: "+err.Error())
		return
	}
	var model string
	if len(body) > 0 {
		valid := false
		if len(t.byModel) == 0 {
			valid = validJSON(body) // every route is a wildcard: the model does not choose
		} else {
			model, valid = scanModel(body)
		}
		if !valid {
			c.refuse(w, proto, http.StatusBadRequest, "invalid_request_error", "the body is not JSON")
			return
		}
	}
	c.body, c.model = body, model
	rt := t.byModel[proto+"\x00"+model]
	if rt == nil {
		rt = t.wild[proto]
	}
	if rt == nil {
		c.refuse(w, proto, http.StatusNotFound, "model_not_found", "no route for model "+quote(model))
		return
	}
	c.rt = rt
	if c.cl != nil && c.cl.allowance != nil && !c.cl.allowance.AllowNAt(time.Time{}, c.cl.class(), 1) {
		c.cl.refused.Add(1)
		w.Header().Set("Retry-After", "1")
		c.refuse(w, proto, http.StatusTooManyRequests, "rate_limit_error", "over this client's allowance at the proxy")
		return
	}
	c.sdkRetry = isRetry(r.Header)
	if c.sdkRetry {
		rt.sdkRetries.Add(1)
	}
	rt.calls.Add(1)
	p.serve(w, r, c)
}

func (cl *client) class() fleet.Class {
	if cl.background {
		return fleet.Background
	}
	return fleet.Interactive
}

// authenticate finds the client whose token the request carries, as its
// SDK sends an API key: Authorization: Bearer, or x-api-key.
func (t *table) authenticate(r *http.Request) *client {
	tok := r.Header.Get("X-Api-Key")
	if tok == "" {
		a := r.Header.Get("Authorization")
		if len(a) > 7 && strings.EqualFold(a[:7], "bearer ") {
			tok = a[7:]
		}
	}
	if tok == "" {
		return nil
	}
	h := sha256.Sum256([]byte(tok))
	cl := t.clients[h]
	if cl == nil {
		return nil
	}
	// The map found it by hash; comparing the hash again in constant
	// time keeps a timing side channel off the lookup's last step.
	for k := range t.clients {
		if t.clients[k] == cl && subtle.ConstantTimeCompare(k[:], h[:]) == 1 {
			return cl
		}
	}
	return nil
}

// isRetry reports whether a request says it is an SDK's retry of one
// already sent: the Stainless SDKs (OpenAI's and Anthropic's, in every
// language) count their attempts in X-Stainless-Retry-Count.
func isRetry(h http.Header) bool {
	v := h["X-Stainless-Retry-Count"] // canonical: no canonicalizing per call
	return len(v) > 0 && v[0] != "" && v[0] != "0"
}

var errTooLarge = errors.New("body too large")

// readBody reads at most limit bytes of body, whose length is n when it
// is known (not negative): into a buffer of that size, with no growing.
func readBody(body io.Reader, n, limit int64) ([]byte, error) {
	if body == nil || body == http.NoBody {
		return nil, nil
	}
	if n >= 0 {
		buf := make([]byte, n+1) // one byte more, to see that nothing follows
		if _, err := io.ReadFull(body, buf[:n]); err != nil {
			return nil, err
		}
		if m, _ := body.Read(buf[n:]); m > 0 {
			return nil, errTooLarge // longer than it said: net/http refuses that itself
		}
		return buf[:n:n], nil
	}
	var b bytes.Buffer
	m, err := b.ReadFrom(io.LimitReader(body, limit+1))
	if err != nil {
		return nil, err
	}
	if m > limit {
		return nil, errTooLarge
	}
	return b.Bytes(), nil
}

// serve is the server side of the hop protocol for a call, as
// recoilhttp.Middleware is for a handler, less what the proxy has no use
// for (it never forwards the client's Recoil- headers, so it need not
// rewrite them): it opens the call's hop account — the budget the caller
// sent, never more than the route's own retries, or for an SDK's retry the
// account of the request it repeats — and its deadline, less the margin,
// and forwards the call under them.
func (p *Proxy) serve(w http.ResponseWriter, r *http.Request, c *call) {
	in, _ := hop.ParseRequest(r.Header) // malformed fields read as absent
	left, hasDeadline := in.TimeLeft(0)
	if hasDeadline && left <= 0 {
		hop.Response{NoRetry: true}.Write(w.Header())
		c.refuse(w, c.proto, http.StatusGatewayTimeout, "timeout_error", "no time left: the caller's deadline leaves the proxy nothing to serve the request with")
		return
	}
	if c.sdkRetry || c.idemKey != "" {
		if done := p.chargeRetry(w, c); done {
			return
		}
	}
	if c.acct == nil {
		c.acct = hop.NewAccount(in.AccountBudget(c.rt.hopBudget, false))
	}
	ctx := hop.WithAccount(r.Context(), c.acct)
	if hasDeadline {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, left)
		defer cancel()
	}
	if c.cl != nil && c.cl.background {
		ctx = recoil.WithPriority(ctx, recoil.PriorityBackground)
	}
	c.ctx = callContext{Context: ctx, c: c}
	p.forward(w, r.WithContext(&c.ctx), c)
}

// forward sends the call to its route and answers with what came back.
// out is the handler's own shallow copy of the request, made to carry the
// call's context: it becomes the request out, pointed at the route's
// first target, with the checked body. Its header map, the client's,
// is filtered in place rather than copied (the Transport copies it for
// each attempt anyway; net/http reads nothing of it once the handler
// runs): everything the proxy needed of it was read before.
func (p *Proxy) forward(w http.ResponseWriter, out *http.Request, c *call) {
	rt := c.rt
	in := out.URL
	c.url = url.URL{Scheme: rt.base.Scheme, Host: rt.base.Host, Path: rt.outPath(in.Path), RawQuery: in.RawQuery}
	out.URL, out.Host, out.RequestURI, out.Close = &c.url, rt.base.Host, "", false
	out.TransferEncoding, out.Trailer = nil, nil
	filterRequestHeader(out.Header)
	if len(c.body) > 0 {
		// An io.NopCloser over a *bytes.Reader is a body net/http knows
		// to be in memory: it writes the request's headers and body to
		// the upstream in one write, where a body of any other type has
		// its headers flushed first — a system call more, and an upstream
		// that may wait for the second segment.
		c.reader.Reset(c.body)
		out.Body, out.GetBody, out.ContentLength = io.NopCloser(&c.reader), c.getBody, int64(len(c.body))
	} else {
		out.Body, out.GetBody, out.ContentLength = nil, nil, 0
	}
	resp, err := rt.send.RoundTrip(out)
	if err != nil {
		c.failed(w, err)
		return
	}
	c.answer(w, resp)
}

// hopByHop are the headers that belong to one connection, never forwarded
// (RFC 9110 §7.6.1), with those the proxy sets itself.
var hopByHop = map[string]bool{
	"Connection": true, "Proxy-Connection": true, "Keep-Alive": true, "Te": true, "Trailer": true,
	"Transfer-Encoding": true, "Upgrade": true, "Host": true, "Content-Length": true,
	// The client's credentials are the proxy's business, never the
	// provider's; the provider's are set per target.
	"Authorization": true, "Proxy-Authorization": true, "X-Api-Key": true, "Api-Key": true, "Cookie": true,
	// The proxy decompresses what it reads (the classifier and the usage
	// reader need the text); the client gets it plain.
	"Accept-Encoding": true,
	// The proxy's own idempotency key goes on every attempt.
	"Idempotency-Key": true, "X-Idempotency-Key": true,
}

// filterRequestHeader removes from h what is never forwarded: the
// hop-by-hop headers and the hop protocol's (the Transport writes the
// proxy's own).
func filterRequestHeader(h http.Header) {
	for k := range h {
		if hopByHop[k] || strings.HasPrefix(k, "Recoil-") {
			delete(h, k)
		}
	}
}

// respSkip are the response headers not passed to the client: the
// connection's own, and a provider's cookies, which are its session with
// the proxy's credentials.
var respSkip = map[string]bool{
	"Connection": true, "Proxy-Connection": true, "Keep-Alive": true, "Te": true, "Trailer": true,
	"Transfer-Encoding": true, "Upgrade": true, "Set-Cookie": true, "Content-Length": true,
	"Recoil-Retries-Spent": true,
}

func quote(s string) string {
	if s == "" {
		return "(none)"
	}
	if len(s) > 100 {
		s = s[:100] + "…"
	}
	return `"` + s + `"`
}
