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

// run is the command: flags, wiring, output. hup delivers reload requests;
// ready, if not nil, receives the address once the proxy listens.
func run(ctx context.Context, args []string, stdout, stderr io.Writer, hup <-chan os.Signal, ready chan<- string) error {
	fs := flag.NewFlagSet("recoil proxy", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfgPath := fs.String("config", "", "configuration file (YAML; docs/proxy.md); none: the SDKs' environment variables")
	listen := fs.String("listen", "", "address to listen on, replacing the file's listen (default "+proxy.DefaultListen+")")
	check := fs.Bool("check", false, "check the configuration, print what it routes, and exit")
	quiet := fs.Bool("quiet", false, "no access log (one line per logical call, on stderr)")
	drain := fs.Duration("drain", proxy.DefaultDrain, "how long a shutdown waits for calls in flight")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: recoil proxy [-config FILE] [-listen ADDR] [-check] [-quiet] [-drain D]")
		fs.PrintDefaults()
	}
	for _, a := range args {
		if a == "-h" || a == "-help" || a == "--help" {
			fs.SetOutput(stdout)
			fs.Usage()
			return flag.ErrHelp
		}
	}
	if err := fs.Parse(args); err != nil {
		return errUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "recoil proxy: unexpected argument %q\n", fs.Arg(0))
		return errUsage
	}
	if *drain <= 0 {
		fmt.Fprintln(stderr, "recoil proxy: -drain must be positive")
		return errUsage
	}
	load := func() (proxy.Config, error) {
		var c proxy.Config
		if *cfgPath != "" {
			var err error
			if c, err = proxy.Load(*cfgPath); err != nil {
				return c, err
			}
		}
		if *listen != "" {
			c.Listen = *listen
		}
		return c, nil
	}
	cfg, err := load()
	if err != nil {
		return err
	}
	log := slog.New(slog.NewJSONHandler(stderr, nil))
	opt := proxy.Options{Logger: log}
	if *quiet {
		opt.Logger = slog.New(slog.NewJSONHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	if opt.Metrics, err = proxy.NewMetrics(reg); err != nil {
		return err
	}
	p, err := proxy.New(cfg, opt)
	if err != nil {
		return err
	}
	defer p.Close()
	if *check {
		for _, r := range p.State().Routes {
			fmt.Fprintf(stdout, "route %s:", r.Name)
			for _, t := range r.Targets {
				fmt.Fprintf(stdout, " %s", t.Name)
			}
			fmt.Fprintln(stdout)
		}
		return nil
	}
	ln, err := net.Listen("tcp", p.Listen())
	if err != nil {
		return err
	}
	log.Info("recoil proxy listening", "addr", ln.Addr().String(), "page", "http://"+ln.Addr().String()+"/recoil/")
	if ready != nil {
		ready <- ln.Addr().String()
	}
	srv := &proxy.Server{Proxy: p, Metrics: promhttp.HandlerFor(reg, promhttp.HandlerOpts{}), Drain: *drain}
	go func() {
		for range hup {
			c, err := load()
			if err == nil {
				err = p.Reload(c)
			}
			if err != nil {
				log.Error("reload refused; the running configuration stays", "err", err.Error())
				continue
			}
			log.Info("configuration reloaded")
		}
	}()
	start := time.Now()
	err = srv.Serve(ctx, ln)
	log.Info("recoil proxy stopped", "after", time.Since(start).Round(time.Millisecond).String())
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}
