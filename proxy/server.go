package proxy

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"sort"
	"sync/atomic"
	"time"
)

// DefaultDrain is how long a shutdown waits for calls in flight, streams
// included, before closing their connections: longer than most model
// answers take to finish streaming.
const DefaultDrain = 2 * time.Minute

// Server serves a Proxy with what a gateway's operator expects beside it:
// /healthz (the process answers), /readyz (it takes calls: 503 while it
// drains), /metrics (Prometheus, when a handler is given), the live page
// at /recoil/ and its figures at /recoil/state. Everything else is the
// Proxy's. The zero Server is not usable: set Proxy.
type Server struct {
	// Proxy answers the API's calls. Required.
	Proxy *Proxy
	// Metrics serves /metrics; nil means 404 there.
	Metrics http.Handler
	// Drain bounds how long Serve waits, once its context ends, for calls
	// in flight to finish; zero means DefaultDrain.
	Drain time.Duration

	draining atomic.Bool
}

// Handler returns the server's handler.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("ok\n")) })
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		if s.draining.Load() {
			http.Error(w, "draining", http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte("ready\n"))
	})
	if s.Metrics != nil {
		mux.Handle("GET /metrics", s.Metrics)
	}
	mux.HandleFunc("GET /recoil/{$}", servePage)
	mux.HandleFunc("GET /recoil/state", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		_ = json.NewEncoder(w).Encode(s.Proxy.State())
	})
	mux.Handle("/", s.Proxy)
	return mux
}

// Serve accepts connections on ln until ctx ends, then stops accepting,
// reports not ready, and waits up to Drain for the calls in flight —
// streams included — to finish before it returns. It returns nil after
// a shutdown that drained, or the error that stopped it.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	srv := &http.Server{
		Handler:           s.Handler(),
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		BaseContext:       func(net.Listener) context.Context { return context.WithoutCancel(ctx) },
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	s.draining.Store(true)
	drain := s.Drain
	if drain <= 0 {
		drain = DefaultDrain
	}
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), drain)
	defer cancel()
	err := srv.Shutdown(dctx)
	if errors.Is(err, context.DeadlineExceeded) {
		_ = srv.Close()
	}
	if serr := <-errc; !errors.Is(serr, http.ErrServerClosed) && err == nil {
		err = serr
	}
	return err
}

// State is what the live page shows: per route, its targets' attempts and
// cool-downs, its allowance, and the calls the proxy refused to pass on.
type State struct {
	Uptime  string        `json:"uptime"`
	Shared  bool          `json:"fleet_shared"` // the fleet's state is in Redis (false: this replica's local share)
	Fleet   bool          `json:"fleet"`        // a fleet is configured
	Routes  []RouteState  `json:"routes"`
	Ledger  int           `json:"remembered_failures"`
	Clients []ClientState `json:"clients,omitempty"`
}

// RouteState is one route on the live page.
type RouteState struct {
	Name     string `json:"name"`
	Calls    int64  `json:"calls"`
	Failed   int64  `json:"failed"`
	Attempts int64  `json:"attempts"`
	Retried  int64  `json:"retried"`
	// SDKRetries are the calls that were an SDK's retry; StormRefused
	// those of them refused because their request's budget was spent.
	SDKRetries   int64         `json:"sdk_retries"`
	StormRefused int64         `json:"storm_refused"`
	Targets      []TargetState `json:"targets"`
	// Allowance is the route's allowance in force and whether it is
	// shared; zero without one.
	AllowanceLimit  int64 `json:"allowance_limit,omitempty"`
	AllowanceShared bool  `json:"allowance_shared,omitempty"`
}

// TargetState is one target of a route on the live page.
type TargetState struct {
	Name     string  `json:"name"`
	Region   string  `json:"region,omitempty"`
	Attempts int64   `json:"attempts"`
	Cooling  float64 `json:"cooling_s"` // seconds it is still passed over
	Out      bool    `json:"out"`       // out until restored (a refused key, an exhausted quota)
}

// ClientState is one client on the live page.
type ClientState struct {
	Name    string `json:"name"`
	Refused int64  `json:"refused"` // calls over its allowance
}

// State returns what the live page shows, now.
func (p *Proxy) State() State {
	t := p.table.Load()
	now := time.Now()
	st := State{Uptime: time.Since(p.started).Round(time.Second).String(), Shared: p.fleet.Shared(),
		Fleet: p.cfg.Fleet != nil, Ledger: p.ledger.size()}
	for _, rt := range t.routes {
		rs := RouteState{Name: rt.name, Calls: rt.calls.Load(), Failed: rt.failed.Load(), Attempts: rt.attempts.Load(),
			Retried: rt.retried.Load(), SDKRetries: rt.sdkRetries.Load(), StormRefused: rt.stormRefused.Load()}
		status := rt.fallback.Status(now)
		rt.mu.Lock()
		for i, tg := range rt.targets {
			ts := TargetState{Name: tg.Name, Region: tg.Region, Attempts: rt.perTarget[tg.Name]}
			if i < len(status) {
				ts.Cooling, ts.Out = status[i].Cooling.Seconds(), status[i].Out
			}
			rs.Targets = append(rs.Targets, ts)
		}
		rt.mu.Unlock()
		if rt.allowance != nil {
			as := rt.allowance.StateAt(now)
			rs.AllowanceLimit, rs.AllowanceShared = as.Limit, as.Shared
		}
		st.Routes = append(st.Routes, rs)
	}
	for _, cl := range t.clients {
		st.Clients = append(st.Clients, ClientState{Name: cl.name, Refused: cl.refused.Load()})
	}
	sort.Slice(st.Clients, func(i, j int) bool { return st.Clients[i].Name < st.Clients[j].Name })
	return st
}
