// Command recoil-proxy is `recoil proxy`: recoil's retry engine in front
// of any language's model SDK. Point an SDK's base URL at it
// (OPENAI_BASE_URL=http://127.0.0.1:8787/v1, ANTHROPIC_BASE_URL=http://127.0.0.1:8787)
// and it forwards to the providers its configuration names — by default,
// the ones the same variables name in its own environment — as the chain's
// one retry layer. docs/proxy.md in the repository tells the whole of it.
//
//	recoil-proxy [-config proxy.yaml] [-listen 127.0.0.1:8787] [-check]
//
// SIGINT and SIGTERM drain calls in flight and stop; SIGHUP reloads the
// configuration file, keeping open streams and what each unchanged route
// has learned.
//
// With OTEL_EXPORTER_OTLP_ENDPOINT (or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT)
// set, and OTEL_TRACES_EXPORTER not "none", it exports OpenTelemetry
// traces over OTLP/HTTP: one span per attempt, in the trace the client's
// traceparent header names.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/recoil-go/recoil/proxy"
	"github.com/recoil-go/recoil/recoilhttp"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr, hup, nil)
	switch {
	case errors.Is(err, flag.ErrHelp):
	case errors.Is(err, errUsage):
		os.Exit(2)
	case err != nil:
		fmt.Fprintln(os.Stderr, "recoil proxy:", err)
		os.Exit(1)
	}
}

var errUsage = errors.New("usage")

// flags are the command's flags, parsed.
type flags struct {
	config, listen string
	check, quiet   bool
	drain          time.Duration
}

// run is the command: flags, wiring, output. hup delivers reload requests;
// ready, if not nil, receives the address once the proxy listens.
func run(ctx context.Context, args []string, stdout, stderr io.Writer, hup <-chan os.Signal, ready chan<- string) error {
	f, err := parseFlags(args, stdout, stderr)
	if err != nil {
		return err
	}
	cfg, err := f.load()
	if err != nil {
		return err
	}
	log := slog.New(slog.NewJSONHandler(stderr, nil)) // the command's own lines
	var trace func(*recoilhttp.Transport) http.RoundTripper
	if !f.check {
		if tr := setupTracing(ctx, log); tr != nil {
			// Deferred first, run last: after the drain, the spans of the
			// calls it waited for are exported too.
			defer tr.shutdown(log)
			trace = tr.wrap
		}
	}
	reg := prometheus.NewRegistry()
	p, err := newProxy(cfg, proxyLogger(stderr, f.quiet), reg, trace)
	if err != nil {
		return err
	}
	defer p.Close()
	if f.check {
		printRoutes(stdout, p)
		return nil
	}
	ln, err := listen(cfg, p.Listen())
	if err != nil {
		return err
	}
	log.Info("recoil proxy listening", "addr", ln.Addr().String(), "page", "http://"+ln.Addr().String()+"/recoil/")
	if ready != nil {
		ready <- ln.Addr().String()
	}
	// Reloads stop before the proxy closes: none lands on a proxy that is
	// shutting down, and none is left waiting after run returns.
	rctx, stopReloads := context.WithCancel(ctx)
	reloaded := make(chan struct{})
	go func() {
		defer close(reloaded)
		reloadOn(rctx, hup, f, p, log)
	}()
	defer func() { stopReloads(); <-reloaded }()
	srv := &proxy.Server{Proxy: p, Metrics: promhttp.HandlerFor(reg, promhttp.HandlerOpts{}), Drain: f.drain}
	return serve(ctx, srv, ln, log)
}

// parseFlags reads the command's flags from args: -help prints the usage
// on stdout and returns flag.ErrHelp; a flag that is wrong is said on
// stderr and returns errUsage.
func parseFlags(args []string, stdout, stderr io.Writer) (flags, error) {
	var f flags
	fs := flag.NewFlagSet("recoil proxy", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&f.config, "config", "", "configuration file (YAML; docs/proxy.md); none: the SDKs' environment variables")
	fs.StringVar(&f.listen, "listen", "", "address to listen on, replacing the file's listen (default "+proxy.DefaultListen+")")
	fs.BoolVar(&f.check, "check", false, "check the configuration, print what it routes, and exit")
	fs.BoolVar(&f.quiet, "quiet", false, "no access log (one line per logical call, on stderr)")
	fs.DurationVar(&f.drain, "drain", proxy.DefaultDrain, "how long a shutdown waits for calls in flight")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: recoil proxy [-config FILE] [-listen ADDR] [-check] [-quiet] [-drain D]")
		fs.PrintDefaults()
	}
	for _, a := range args {
		if a == "-h" || a == "-help" || a == "--help" {
			fs.SetOutput(stdout)
			fs.Usage()
			return f, flag.ErrHelp
		}
	}
	if err := fs.Parse(args); err != nil {
		return f, errUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "recoil proxy: unexpected argument %q\n", fs.Arg(0))
		return f, errUsage
	}
	if f.drain <= 0 {
		fmt.Fprintln(stderr, "recoil proxy: -drain must be positive")
		return f, errUsage
	}
	return f, nil
}

// load reads the configuration the flags name — the file, if any, with
// -listen in place of its listen — at start and on every reload.
func (f flags) load() (proxy.Config, error) {
	var c proxy.Config
	if f.config != "" {
		var err error
		if c, err = proxy.Load(f.config); err != nil {
			return c, err
		}
	}
	if f.listen != "" {
		c.Listen = f.listen
	}
	return c, nil
}

// proxyLogger is the proxy's: its access log and warnings, as JSON on w;
// quiet keeps the warnings only.
func proxyLogger(w io.Writer, quiet bool) *slog.Logger {
	var opt slog.HandlerOptions
	if quiet {
		opt.Level = slog.LevelWarn
	}
	return slog.New(slog.NewJSONHandler(w, &opt))
}

// newProxy makes the proxy cfg describes, logging to log, with its
// metrics and the Go runtime's and process's registered with reg, and
// its routes' Transports traced by trace if not nil.
func newProxy(cfg proxy.Config, log *slog.Logger, reg *prometheus.Registry, trace func(*recoilhttp.Transport) http.RoundTripper) (*proxy.Proxy, error) {
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	m, err := proxy.NewMetrics(reg)
	if err != nil {
		return nil, err
	}
	return proxy.New(cfg, proxy.Options{Logger: log, Metrics: m, Trace: trace})
}

// printRoutes is -check's output: each route and its targets, in order.
func printRoutes(w io.Writer, p *proxy.Proxy) {
	for _, r := range p.State().Routes {
		fmt.Fprintf(w, "route %s:", r.Name)
		for _, t := range r.Targets {
			fmt.Fprintf(w, " %s", t.Name)
		}
		fmt.Fprintln(w)
	}
}

// listen opens the proxy's listener on addr. Without client
// authentication the proxy serves loopback only: the configuration's
// address was checked for that, and the address the listener is bound to
// is checked again (a name such as localhost can resolve beyond
// loopback).
func listen(cfg proxy.Config, addr string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	if err := checkBound(cfg, ln.Addr().String()); err != nil {
		ln.Close()
		return nil, err
	}
	return ln, nil
}

// checkBound refuses a bound address beyond loopback for a configuration
// with no clients that did not say insecure_no_client_auth.
func checkBound(cfg proxy.Config, bound string) error {
	if len(cfg.Clients) > 0 || cfg.InsecureNoClientAuth || proxy.IsLoopback(bound) {
		return nil
	}
	return fmt.Errorf("listening on %s, which is not loopback, with no clients: name clients (with tokens), "+
		"or set insecure_no_client_auth: true", bound)
}

// reloadOn reloads the configuration on every signal hup delivers, until
// ctx ends. A configuration that does not load or that Reload refuses is
// logged, and the running one stays.
func reloadOn(ctx context.Context, hup <-chan os.Signal, f flags, p *proxy.Proxy, log *slog.Logger) {
	for {
		select {
		case <-ctx.Done():
			return
		case _, ok := <-hup:
			if !ok {
				return
			}
		}
		c, err := f.load()
		if err == nil {
			err = p.Reload(c)
		}
		if err != nil {
			log.Error("reload refused; the running configuration stays", "err", err.Error())
			continue
		}
		log.Info("configuration reloaded")
	}
}

// serve serves srv on ln until ctx ends, then drains it (Server.Serve),
// and logs how long it ran. A shutdown that drained is no error.
func serve(ctx context.Context, srv *proxy.Server, ln net.Listener, log *slog.Logger) error {
	start := time.Now()
	err := srv.Serve(ctx, ln)
	log.Info("recoil proxy stopped", "after", time.Since(start).Round(time.Millisecond).String())
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}
