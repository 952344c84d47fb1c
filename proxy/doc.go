// Package proxy is recoil proxy: recoil's retry engine in front of any
// language's model SDK. A Python or TypeScript service points its SDK's
// base URL at the proxy; the proxy forwards OpenAI- and Anthropic-compatible
// calls to the targets of the route the requested model names, through one
// recoilhttp.Transport per route — the engine's one loop, with its
// classification, backoff, Retry-After, retry budget, breaker, Fallback and
// Hedge — and is the chain's one retry layer: its failure answers carry
// x-should-retry: false, which the official SDKs obey, and an SDK's retry
// that arrives anyway is charged to the hop account of the request it
// repeats.
//
// # Usage
//
//	cfg, err := proxy.Load("proxy.yaml") // or the zero Config: the SDKs' environment variables
//	if err != nil {
//		return err // a *policyspec.Error: file:line: field: problem
//	}
//	p, err := proxy.New(cfg, proxy.Options{Logger: slog.Default()})
//	if err != nil {
//		return err
//	}
//	defer p.Close()
//	ln, err := net.Listen("tcp", p.Listen())
//	if err != nil {
//		return err
//	}
//	return (&proxy.Server{Proxy: p}).Serve(ctx, ln) // drains calls in flight when ctx ends
//
// The command is proxy/cmd/recoil-proxy. The repository's docs/proxy.md
// tells how to point each SDK at it, every configuration field, what it
// does with each failure, and what it costs.
package proxy
