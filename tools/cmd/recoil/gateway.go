package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/recoil-go/recoil/tools/gateway"
	"github.com/recoil-go/recoil/tools/tally"
)

func init() {
	register(command{"gateway", "serve a fault-injecting gateway that counts every attempt that arrives", runGateway})
}

var gatewayHelp = help{
	usage: "recoil gateway [flags]",
	about: `
Serves a fault-injecting HTTP dependency on loopback and counts, from the
receiving side, every attempt that arrives — by client, by logical request
and by attempt number — with the peak in any window. Its faults follow a
timeline counted from the first attempt: outages answering 503 (or a status
you choose), lasting a fixed time or until the offered load drops; random
failures; latency; a validator that rejects a JSON field with a
provider-style 400; a per-key allowance answering 429 with Retry-After; and
streamed answers that stall; and a charge route (/v1/charges) that counts
its side effect per logical request, can drop the connection after it, and
honours Idempotency-Key if asked. Any path is the dependency; /stats serves the
counts as JSON, / a live page and /metrics Prometheus metrics. It serves
until interrupted (Ctrl-C), then prints what it counted.`,
	examples: `  recoil gateway -outage 700ms
      a 700 ms payment-gateway outage from the first attempt
  recoil gateway -outage 700ms:529 -recover-below 20
      overloaded (529) for 700 ms, then until fewer than 20 attempts arrive per 200 ms for 300 ms
  recoil gateway -addr 127.0.0.1:8080 -timeline faults.yaml -fail-rate 0.1
      a fixed port, the faults of a timeline file, and one attempt in ten failing
  recoil gateway -charge-drop-rate 0.3 -charge-idempotency
      drop the answer of 3 charges in 10 after charging; retries under an Idempotency-Key are replayed
  recoil gateway -outage 700ms -serial 12ms
      the same outage behind a transport that carries one attempt at a time, 12 ms each
  recoil gateway -target primary=primary.yaml -target backup
      two providers on one port: /primary/ with the faults of primary.yaml, /backup/ healthy`,
	notes: `
-outage START+DURATION[:STATUS] counts START from the first attempt;
DURATION[:STATUS] starts at it. Flags given override the fields of a
-timeline file. -recover-below and -recover-for apply to every -outage flag.
With -target, each target's faults come from its own timeline file, its
timeline counts from its own first attempt, and only -addr and
-allow-remote may be given besides.`,
	exit: `130 when interrupted (Ctrl-C), its normal way to stop, after printing
what it counted; 1 when it cannot serve (the address is in use); 2 usage
error.`,
}

// outageFlags collects -outage values: START+DURATION[:STATUS], or
// DURATION[:STATUS] from the first attempt.
type outageFlags []gateway.Outage

func (o *outageFlags) String() string { return "" }

func (o *outageFlags) Set(v string) error {
	spec, status := v, 0
	if i := strings.LastIndexByte(v, ':'); i >= 0 {
		n, err := strconv.Atoi(v[i+1:])
		if err != nil {
			return fmt.Errorf("status %q is not a number", v[i+1:])
		}
		spec, status = v[:i], n
	}
	var out gateway.Outage
	start, length, found := strings.Cut(spec, "+")
	if !found {
		start, length = "0s", spec
	}
	var err error
	if out.Start, err = time.ParseDuration(start); err != nil {
		return fmt.Errorf("start %q is not a duration", start)
	}
	if out.Duration, err = time.ParseDuration(length); err != nil {
		return fmt.Errorf("duration %q is not a duration", length)
	}
	out.Status = status
	if err := (&gateway.Config{Outages: []gateway.Outage{out}}).Validate(); err != nil {
		return err
	}
	*o = append(*o, out)
	return nil
}

// parseLatency reads -latency: D, constant:D, uniform:MIN,MAX or
// exponential:MEAN[,MIN[,MAX]].
func parseLatency(v string) (gateway.Latency, error) {
	dist, args, found := strings.Cut(v, ":")
	if !found {
		dist, args = string(gateway.Constant), v
	}
	var ds []time.Duration
	for _, a := range strings.Split(args, ",") {
		d, err := time.ParseDuration(strings.TrimSpace(a))
		if err != nil {
			return gateway.Latency{}, fmt.Errorf("-latency %q: %q is not a duration", v, a)
		}
		ds = append(ds, d)
	}
	l := gateway.Latency{Dist: gateway.Distribution(dist)}
	switch {
	case l.Dist == gateway.Constant && len(ds) == 1:
		l.Mean = ds[0]
	case l.Dist == gateway.Uniform && len(ds) == 2:
		l.Min, l.Max = ds[0], ds[1]
	case l.Dist == gateway.Exponential && len(ds) >= 1 && len(ds) <= 3:
		l.Mean = ds[0]
		if len(ds) > 1 {
			l.Min = ds[1]
		}
		if len(ds) > 2 {
			l.Max = ds[2]
		}
	default:
		return gateway.Latency{}, fmt.Errorf("-latency %q: want constant:D, uniform:MIN,MAX or exponential:MEAN[,MIN[,MAX]]", v)
	}
	return l, nil
}

// gatewayFlags are the values of the flags that set a gateway.Config
// field, read after parsing.
type gatewayFlags struct {
	window                              time.Duration
	seed                                uint64
	failRate                            float64
	failStatus                          int
	latency, reject, allowanceHeader    string
	allowance                           int
	streamEvents, stallAfter            int
	streamInterval, stallFor, stallPing time.Duration
	stallRate                           float64
	clientHeader, requestHeader         string
	recoverBelow                        int
	recoverFor                          time.Duration
	outages                             outageFlags
	addr, timeline                      string
	allowRemote, bare                   bool
	chargePath                          string
	chargeDropRate                      float64
	chargeIdempotency                   bool
	serial                              time.Duration
	targets                             targetFlags
}

// targetFlags collects -target values: NAME, a healthy target, or
// NAME=FILE, a target with the faults of a timeline file.
type targetFlags []gateway.Target

func (t *targetFlags) String() string { return "" }

func (t *targetFlags) Set(v string) error {
	name, file, withFile := strings.Cut(v, "=")
	tg := gateway.Target{Name: name}
	if withFile {
		if file == "" {
			return fmt.Errorf("%q names no timeline file after =", v)
		}
		cfg, err := gateway.LoadTimeline(file)
		if err != nil {
			return fmt.Errorf("%s: %v", file, pathErr(err))
		}
		tg.Config = cfg
	}
	if _, err := gateway.NewSet("", false, []gateway.Target{tg}); err != nil {
		return err
	}
	*t = append(*t, tg)
	return nil
}

func (g *gatewayFlags) define(fs *flags) {
	fs.StringVar(&g.addr, "addr", gateway.DefaultAddr, "address to listen on; loopback unless -allow-remote")
	fs.BoolVar(&g.allowRemote, "allow-remote", false, "allow -addr to bind beyond loopback")
	fs.StringVar(&g.timeline, "timeline", "", "YAML timeline `file` (gateway.ParseTimeline); flags given override its fields")
	fs.DurationVar(&g.window, "window", tally.DefaultWindow, fmt.Sprintf("span the peak is counted over, 1ms to %v", tally.MaxWindow))
	fs.Uint64Var(&g.seed, "seed", 0, "seed for the random faults")
	fs.Var(&g.outages, "outage", "an outage `START+DURATION[:STATUS]` counted from the first attempt (e.g. 0s+700ms:503); repeatable")
	fs.IntVar(&g.recoverBelow, "recover-below", 0, "each -outage lasts, past its duration, until attempts per window stay below `N` (default: a fixed length)")
	fs.DurationVar(&g.recoverFor, "recover-for", 300*time.Millisecond, "… for this long (with -recover-below)")
	fs.Float64Var(&g.failRate, "fail-rate", 0, "probability, 0 to 1, that an attempt fails with -fail-status")
	fs.IntVar(&g.failStatus, "fail-status", gateway.DefaultFailureStatus, "status of a random failure, 400 to 599 (with -fail-rate)")
	fs.StringVar(&g.latency, "latency", "", "latency before answering: `D`, constant:D, uniform:MIN,MAX or exponential:MEAN[,MIN[,MAX]]")
	fs.DurationVar(&g.serial, "serial", 0, fmt.Sprintf("serialise the attempts: one at a time, each holding a single lane this long before it is counted and answered, in arrival order (e.g. 12ms; up to %v; default off)", gateway.MaxSerial))
	fs.StringVar(&g.reject, "reject-field", "", "JSON `field` the validator rejects with a provider-style 400 (e.g. strict)")
	fs.IntVar(&g.allowance, "allowance", 0, "requests per minute per key; beyond, 429 with Retry-After (0: none)")
	fs.StringVar(&g.allowanceHeader, "allowance-header", "", "header whose value is the allowance's key (default: the client; with -allowance)")
	fs.IntVar(&g.streamEvents, "stream-events", gateway.DefaultStreamEvents, fmt.Sprintf("content deltas in a streamed answer, 1 to %d", gateway.MaxStreamEvents))
	fs.DurationVar(&g.streamInterval, "stream-interval", 0, "pause between streamed events")
	fs.Float64Var(&g.stallRate, "stall-rate", 0, "fraction, 0 to 1, of streamed answers that stall")
	fs.IntVar(&g.stallAfter, "stall-after", 0, "events a stalling stream sends before it stalls (with -stall-rate)")
	fs.DurationVar(&g.stallFor, "stall-for", 0, "how long a stall lasts (default: until the client goes away; with -stall-rate)")
	fs.DurationVar(&g.stallPing, "stall-ping", 0, "send an SSE ping this often during a stall (default: none; with -stall-rate)")
	fs.StringVar(&g.clientHeader, "client-header", tally.DefaultClientHeader, "header that names the client")
	fs.StringVar(&g.requestHeader, "request-header", tally.DefaultRequestHeader, "header that names the logical request")
	fs.StringVar(&g.chargePath, "charge-path", gateway.DefaultChargePath, "`path` of the charge route, whose success makes a counted charge (a side effect)")
	fs.Float64Var(&g.chargeDropRate, "charge-drop-rate", 0, "fraction, 0 to 1, of charges whose connection is dropped after the charge, before the answer")
	fs.BoolVar(&g.chargeIdempotency, "charge-idempotency", false, "honour Idempotency-Key on the charge route (package idempotency, a memory store): a retry under the same key is replayed, not charged")
	fs.Var(&g.targets, "target", "serve several dependencies, `NAME[=TIMELINE.yaml]`: each under /NAME/ with its own timeline (none: healthy) and counts; repeatable")
	fs.BoolVar(&g.bare, "bare", false, "serve a bare handler that answers every request with the success body and counts nothing: the throughput baseline")
}

// apply sets the Config field of the flag named name.
func (g *gatewayFlags) apply(name string, cfg *gateway.Config) error {
	switch name {
	case "window":
		cfg.Window = g.window
	case "seed":
		cfg.Seed = g.seed
	case "fail-rate":
		cfg.FailureRate = g.failRate
	case "fail-status":
		cfg.FailureStatus = g.failStatus
	case "latency":
		l, err := parseLatency(g.latency)
		if err != nil {
			return err
		}
		cfg.Latency = l
	case "reject-field":
		cfg.RejectField = g.reject
	case "serial":
		cfg.Serial = g.serial
	case "allowance":
		cfg.Allowance = g.allowance
	case "allowance-header":
		cfg.AllowanceHeader = g.allowanceHeader
	case "stream-events":
		cfg.Stream.Events = g.streamEvents
	case "stream-interval":
		cfg.Stream.Interval = g.streamInterval
	case "stall-rate":
		cfg.Stream.StallRate = g.stallRate
	case "stall-after":
		cfg.Stream.StallAfter = g.stallAfter
	case "stall-for":
		cfg.Stream.StallFor = g.stallFor
	case "stall-ping":
		cfg.Stream.StallPing = g.stallPing
	case "client-header":
		cfg.ClientHeader = g.clientHeader
	case "request-header":
		cfg.RequestHeader = g.requestHeader
	case "charge-path":
		cfg.Charge.Path = g.chargePath
	case "charge-drop-rate":
		cfg.Charge.DropRate = g.chargeDropRate
	case "charge-idempotency":
		cfg.Charge.Idempotency = g.chargeIdempotency
	}
	return nil
}

// config builds the gateway's Config: the -timeline file's, the flags
// given over it, each flag checked on its own so that an error names it.
func (g *gatewayFlags) config(fs *flags) (gateway.Config, error) {
	var cfg gateway.Config
	if g.timeline != "" {
		var err error
		if cfg, err = gateway.LoadTimeline(g.timeline); err != nil {
			return cfg, usagef("-timeline %s: %v", g.timeline, pathErr(err))
		}
	}
	var bad error
	fs.Visit(func(f *flag.Flag) {
		if bad != nil {
			return
		}
		var one gateway.Config
		if err := g.apply(f.Name, &one); err != nil {
			bad = usagef("%v", err)
			return
		}
		if err := one.Validate(); err != nil {
			bad = usagef("-%s %s: %v", f.Name, f.Value, err)
			return
		}
		_ = g.apply(f.Name, &cfg)
	})
	if bad != nil {
		return cfg, bad
	}
	if g.recoverBelow < 0 {
		return cfg, usagef("-recover-below %d: must be 1 or more", g.recoverBelow)
	}
	for _, o := range g.outages {
		if g.recoverBelow > 0 {
			o.Recovery = gateway.Recovery{Below: g.recoverBelow, For: g.recoverFor}
		}
		cfg.Outages = append(cfg.Outages, o)
	}
	cfg.Addr, cfg.AllowRemote = g.addr, g.allowRemote
	if err := cfg.Validate(); err != nil {
		if g.timeline == "" {
			return cfg, usagef("%v", err)
		}
		return cfg, usagef("-timeline %s: %v", g.timeline, err)
	}
	return cfg, nil
}

// check rejects flags that would be silently ignored, or silently replaced
// by a default, given the others.
func (g *gatewayFlags) check(fs *flags) error {
	if len(g.targets) > 0 {
		if f := fs.givenAny("bare", "timeline", "window", "seed", "outage", "recover-below", "recover-for", "fail-rate", "fail-status",
			"latency", "serial", "reject-field", "allowance", "allowance-header", "stream-events", "stream-interval", "stall-rate",
			"stall-after", "stall-for", "stall-ping", "client-header", "request-header",
			"charge-path", "charge-drop-rate", "charge-idempotency"); f != "" {
			return usagef("-target gives each target its faults in its own timeline file; -%s would apply to none of them (put it in the files)", f)
		}
		return nil
	}
	if g.bare {
		if f := fs.givenAny("timeline", "window", "seed", "outage", "recover-below", "recover-for", "fail-rate", "fail-status",
			"latency", "serial", "reject-field", "allowance", "allowance-header", "stream-events", "stream-interval", "stall-rate",
			"stall-after", "stall-for", "stall-ping", "client-header", "request-header",
			"charge-path", "charge-drop-rate", "charge-idempotency"); f != "" {
			return usagef("-bare serves a handler without faults or counting; it takes no -%s", f)
		}
		return nil
	}
	if err := fs.noZero(map[string]string{
		"window":        fmt.Sprintf("must be 1ms to %v", tally.MaxWindow),
		"fail-status":   "must be 400 to 599",
		"stream-events": fmt.Sprintf("must be 1 to %d", gateway.MaxStreamEvents),
	}); err != nil {
		return err
	}
	for _, name := range []string{"client-header", "request-header"} {
		if f := fs.Lookup(name); fs.given(name) && strings.TrimSpace(f.Value.String()) == "" {
			return usagef("-%s is empty: name a header (leave the flag out for %s)", name, f.DefValue)
		}
	}
	switch {
	case fs.given("recover-below") && len(g.outages) == 0:
		return usagef("-recover-below applies to the -outage flags, and none is given")
	case fs.given("recover-for") && g.recoverBelow == 0:
		return usagef("-recover-for applies with -recover-below, which is not given")
	}
	return nil
}

// checkDependent rejects flags that only matter with another setting the
// final config lacks (from the flags or the timeline).
func checkDependent(fs *flags, cfg gateway.Config) error {
	switch {
	case fs.given("fail-status") && cfg.FailureRate == 0:
		return usagef("-fail-status is the status of random failures; set -fail-rate (or failure.rate in the timeline)")
	case fs.given("allowance-header") && cfg.Allowance == 0:
		return usagef("-allowance-header names the allowance's key; set -allowance (or the timeline's allowance)")
	}
	if cfg.Stream.StallRate == 0 {
		if f := fs.givenAny("stall-after", "stall-for", "stall-ping"); f != "" {
			return usagef("-%s shapes stalling streams; set -stall-rate (or stream.stall_rate in the timeline)", f)
		}
	}
	return nil
}

func runGateway(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("gateway", stdout, gatewayHelp)
	var g gatewayFlags
	g.define(fs)
	if err := fs.parse(args); err != nil {
		return err
	}
	if err := g.check(fs); err != nil {
		return err
	}
	if g.bare {
		gw, err := gateway.New(gateway.Config{Addr: g.addr, AllowRemote: g.allowRemote})
		if err != nil {
			return err
		}
		ln, err := listen(gw)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "recoil gateway: bare handler on http://%s (counts nothing)\n", ln.Addr())
		if err := serveBare(ctx, ln); err != nil {
			return err
		}
		return fmt.Errorf("%w: stopped serving", errInterrupted)
	}
	if len(g.targets) > 0 {
		return serveTargets(ctx, g, stdout)
	}
	cfg, err := g.config(fs)
	if err != nil {
		return err
	}
	if err := checkDependent(fs, cfg); err != nil {
		return err
	}

	gw, err := gateway.New(cfg)
	if err != nil {
		return err
	}
	ln, err := listen(gw)
	if err != nil {
		return err
	}
	url := "http://" + ln.Addr().String()
	fmt.Fprintf(stdout, "recoil gateway: serving on %s\n", url)
	fmt.Fprintf(stdout, "  dependency %s/v1/messages (any other path too) · page %s/ · stats %s/stats · metrics %s/metrics\n", url, url, url, url)
	c := gw.Config().Charge
	fmt.Fprintf(stdout, "  charge route %s%s: counts charges per logical request; Idempotency-Key %s\n",
		url, c.Path, honoured(c.Idempotency))
	for _, l := range faultLines(gw.Config(), "the first attempt") {
		fmt.Fprintf(stdout, "  %s\n", l)
	}
	if err := gw.Serve(ctx, ln); err != nil {
		return err
	}
	s := gw.Stats()
	fmt.Fprintf(stdout, "stopped (interrupted); counted: %d attempts, %d answered with a success, peak %d in one %v (sliding), from %d clients, %d logical requests\n",
		s.Attempts, s.Accepted, s.Peak, s.Window, len(s.Clients), len(s.Requests))
	if c := s.Charges; c.Effects > 0 {
		fmt.Fprintf(stdout, "charges: %d made, %d duplicates (%d logical requests charged more than once), %d connections dropped after the charge\n",
			c.Effects, c.Duplicates, c.Doubled, c.Dropped)
	}
	return fmt.Errorf("%w: stopped serving", errInterrupted)
}

// serveTargets serves the -target gateways as one gateway.Set until ctx
// is done, then prints what each counted.
func serveTargets(ctx context.Context, g gatewayFlags, stdout io.Writer) error {
	set, err := gateway.NewSet(g.addr, g.allowRemote, g.targets)
	if err != nil {
		return usagef("-target: %v", err)
	}
	ln, err := set.Listen()
	if errors.Is(err, gateway.ErrNotLoopback) {
		return usagef("-addr %s: not a loopback address; add -allow-remote to serve beyond this machine", set.Addr())
	}
	if err != nil {
		return err
	}
	url := "http://" + ln.Addr().String()
	fmt.Fprintf(stdout, "recoil gateway: serving on %s\n", url)
	fmt.Fprintf(stdout, "  %d targets, each under its own path · index %s/ · stats of all %s/stats · metrics of all %s/metrics\n", len(g.targets), url, url, url)
	for _, t := range g.targets {
		gw := set.Gateway(t.Name)
		fmt.Fprintf(stdout, "  %s: dependency %s/%s/v1/messages (any path under /%s/) · page %s/%s/\n", t.Name, url, t.Name, t.Name, url, t.Name)
		for _, l := range faultLines(gw.Config(), t.Name+"'s first attempt") {
			fmt.Fprintf(stdout, "    %s\n", l)
		}
	}
	if err := set.Serve(ctx, ln); err != nil {
		return err
	}
	fmt.Fprintln(stdout, "stopped (interrupted); counted:")
	for _, ts := range set.Stats() {
		s := ts.Stats
		fmt.Fprintf(stdout, "  %s: %d attempts, %d answered with a success, peak %d in one %v (sliding), %d logical requests\n",
			ts.Name, s.Attempts, s.Accepted, s.Peak, s.Window, len(s.Requests))
	}
	return fmt.Errorf("%w: stopped serving", errInterrupted)
}

// withCode formats an outage's error code after its status, if it has one.
func withCode(code string) string {
	if code == "" {
		return ""
	}
	return " " + code
}

// honoured says whether the charge route honours Idempotency-Key.
func honoured(on bool) string {
	if on {
		return "honoured"
	}
	return "not honoured"
}

// listen opens the gateway's listener; an address it may not bind is a
// usage error.
func listen(gw *gateway.Gateway) (net.Listener, error) {
	ln, err := gw.Listen()
	if errors.Is(err, gateway.ErrNotLoopback) {
		return nil, usagef("-addr %s: not a loopback address; add -allow-remote to serve beyond this machine", gw.Config().Addr)
	}
	return ln, err
}

// serveBare serves gateway.Bare on ln until ctx is done.
func serveBare(ctx context.Context, ln net.Listener) error {
	srv := &http.Server{Handler: gateway.Bare(), ReadHeaderTimeout: 10 * time.Second, ErrorLog: log.New(io.Discard, "", 0)}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), gateway.ShutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		_ = srv.Close()
	}
	<-done
	return nil
}
