package gateway

import (
	"context"
	"errors"
	"fmt"
	"html"
	"io"
	"log"
	"net"
	"net/http"
	"regexp"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// MaxTargets bounds the gateways of one Set.
const MaxTargets = 16

// Target is one named gateway of a Set: a dependency with a fault timeline
// and counters of its own, such as one provider of a fallback chain.
type Target struct {
	// Name is the path prefix the target is served under, /Name/. It is
	// 1 to 32 lower-case letters, digits, '-' or '_', starting with a
	// letter, and not one of the Set's own paths (stats, metrics).
	Name string
	// Config is the target's gateway configuration. Its Addr and
	// AllowRemote are ignored: the Set listens for all of its targets.
	Config Config
}

var targetName = regexp.MustCompile(`^[a-z][a-z0-9_-]{0,31}$`)

// Set serves several gateways on one listener, each under a path prefix
// of its own: /primary/v1/messages is an attempt at the gateway named
// primary, /backup/stats its counts, /backup/ its live page. Each target
// keeps its own timeline, counted from the first attempt it receives, so
// a Set plays a chain of providers that fail in different ways at
// different times, for a caller that falls back across them
// (recoilhttp.Endpoint, one per target). The Set's own paths are
//
//	GET /          an index of the targets, linking each one's page
//	GET /stats     every target's Stats, as JSON: {"targets": [{"name", "stats"}]}
//	GET /metrics   every target's metrics, with a target label
//
// and any other path is answered 404, naming the targets. Make one with
// NewSet; a Set is safe for concurrent use and serves once, as a Gateway.
type Set struct {
	addr        string
	allowRemote bool
	names       []string
	gws         map[string]*Gateway
	metrics     http.Handler
}

// NewSet returns a Set of the targets, in order, listening on addr (empty
// means DefaultAddr; a host beyond loopback needs allowRemote). An error
// names the first target that is not valid: a name that is not valid or
// is given twice, or a Config that New refuses (the error then matches
// ErrConfig). At least one target and at most MaxTargets.
func NewSet(addr string, allowRemote bool, targets []Target) (*Set, error) {
	switch {
	case len(targets) == 0:
		return nil, &configError{field: "targets", msg: "none given: a set serves at least one target"}
	case len(targets) > MaxTargets:
		return nil, &configError{field: "targets", msg: fmt.Sprintf("%d given: at most %d", len(targets), MaxTargets)}
	}
	if addr == "" {
		addr = DefaultAddr
	}
	s := &Set{addr: addr, allowRemote: allowRemote, gws: make(map[string]*Gateway, len(targets))}
	reg := prometheus.NewRegistry()
	for _, t := range targets {
		switch {
		case !targetName.MatchString(t.Name):
			return nil, &configError{field: "targets", msg: fmt.Sprintf("name %q: want 1 to 32 lower-case letters, digits, - or _, starting with a letter", t.Name)}
		case t.Name == "stats" || t.Name == "metrics":
			return nil, &configError{field: "targets", msg: fmt.Sprintf("name %q is one of the set's own paths", t.Name)}
		case s.gws[t.Name] != nil:
			return nil, &configError{field: "targets", msg: fmt.Sprintf("name %q is given twice", t.Name)}
		}
		cfg := t.Config
		cfg.Addr, cfg.AllowRemote = "", false
		g, err := New(cfg)
		if err != nil {
			var ce *configError
			if errors.As(err, &ce) {
				return nil, &configError{field: "targets." + t.Name + "." + ce.field, msg: ce.msg}
			}
			return nil, err
		}
		prometheus.WrapRegistererWith(prometheus.Labels{"target": t.Name}, reg).MustRegister(collector{g}, g.duration)
		s.names = append(s.names, t.Name)
		s.gws[t.Name] = g
	}
	s.metrics = promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorLog: log.New(io.Discard, "", 0)})
	return s, nil
}

// Names returns the targets' names, in order.
func (s *Set) Names() []string { return append([]string(nil), s.names...) }

// Gateway returns the target named name, or nil.
func (s *Set) Gateway(name string) *Gateway { return s.gws[name] }

// TargetStats is one target's counts, in Set.Stats.
type TargetStats struct {
	// Name is the target's name.
	Name string `json:"name"`
	// Stats is what its gateway counted.
	Stats Stats `json:"stats"`
}

// Stats returns every target's Stats, in order.
func (s *Set) Stats() []TargetStats {
	out := make([]TargetStats, len(s.names))
	for i, n := range s.names {
		out[i] = TargetStats{Name: n, Stats: s.gws[n].Stats()}
	}
	return out
}

// ServeHTTP sends a request under /NAME/ to the target named NAME, with
// the prefix taken off, and answers the Set's own paths.
func (s *Set) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p := r.URL.Path
	switch p {
	case "/stats":
		s.serveStats(w, r)
		return
	case "/metrics":
		s.metrics.ServeHTTP(w, r)
		return
	case "/":
		if r.Method == http.MethodGet || r.Method == http.MethodHead {
			s.serveIndex(w)
			return
		}
	case "/favicon.ico":
		w.WriteHeader(http.StatusNoContent)
		return
	}
	name, rest, _ := strings.Cut(strings.TrimPrefix(p, "/"), "/")
	g := s.gws[name]
	if g == nil {
		http.Error(w, fmt.Sprintf("no target %q: the targets are served under /%s/", name, strings.Join(s.names, "/, /")), http.StatusNotFound)
		return
	}
	if rest == "" && !strings.HasSuffix(p, "/") {
		// The page's links are relative: /primary must be /primary/.
		http.Redirect(w, r, "/"+name+"/", http.StatusMovedPermanently)
		return
	}
	r2 := new(http.Request)
	*r2 = *r
	u := *r.URL
	u.Path, u.RawPath = "/"+rest, ""
	r2.URL = &u
	g.ServeHTTP(w, r2)
}

func (s *Set) serveStats(w http.ResponseWriter, r *http.Request) {
	series, requests, ok := statsQuery(w, r)
	if !ok {
		return
	}
	out := struct {
		Targets []TargetStats `json:"targets"`
	}{make([]TargetStats, len(s.names))}
	now := time.Now()
	for i, n := range s.names {
		out.Targets[i] = TargetStats{Name: n, Stats: s.gws[n].statsAt(now, series, requests)}
	}
	writeStats(w, out)
}

func (s *Set) serveIndex(w http.ResponseWriter) {
	var b strings.Builder
	b.WriteString(`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>recoil gateway: targets</title>` +
		`<style>body{font:15px system-ui,sans-serif;margin:2em;max-width:44em}li{margin:.4em 0}</style></head><body>` +
		`<h1>recoil gateway</h1><p>Each target is a dependency with a fault timeline and counters of its own.</p><ul>`)
	for _, n := range s.names {
		e := html.EscapeString(n)
		fmt.Fprintf(&b, `<li><a href="%s/">%s</a>: attempts at /%s/…, counts at <a href="%s/stats">/%s/stats</a></li>`, e, e, e, e, e)
	}
	b.WriteString(`</ul><p>All targets: <a href="stats">stats</a> · <a href="metrics">metrics</a></p></body></html>`)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, _ = io.WriteString(w, b.String())
}

// Close closes every target (Gateway.Close).
func (s *Set) Close() {
	for _, g := range s.gws {
		g.Close()
	}
}

// Listen opens the Set's listener, as Gateway.Listen does.
func (s *Set) Listen() (net.Listener, error) {
	return listenOn(s.addr, s.allowRemote)
}

// Serve serves the Set on ln until ctx is done, then stops as
// Gateway.Serve does.
func (s *Set) Serve(ctx context.Context, ln net.Listener) error {
	return serveOn(ctx, ln, s, s.Close)
}

// Start listens and serves in the background, as Gateway.Start does; the
// URL is the Set's, a target's is URL + "/" + its name.
func (s *Set) Start() (url string, stop func() error, err error) {
	return start(s.Listen, s.Serve)
}

// Addr returns the address Listen binds.
func (s *Set) Addr() string { return s.addr }
