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

	"github.com/recoil-go/recoil/gateway"
)

func init() {
	register(command{"gateway", "serve a fault-injecting gateway that counts what arrives (seed 004)", runGateway})
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

func runGateway(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("gateway", stderr)
	addr := fs.String("addr", gateway.DefaultAddr, "address to listen on; loopback unless -allow-remote")
	allowRemote := fs.Bool("allow-remote", false, "allow -addr to bind beyond loopback")
	timeline := fs.String("timeline", "", "YAML timeline `file` (gateway.ParseTimeline); flags given override its fields")
	window := fs.Duration("window", gateway.DefaultWindow, "span the peak is counted over")
	seed := fs.Uint64("seed", 0, "seed for the random faults")
	var outages outageFlags
	fs.Var(&outages, "outage", "an outage `START+DURATION[:STATUS]` counted from the first attempt (e.g. 0s+700ms:503); repeatable")
	recoverBelow := fs.Int("recover-below", 0, "-outage lasts, past its duration, until attempts per window stay below `N` (0: fixed length)")
	recoverFor := fs.Duration("recover-for", 300*time.Millisecond, "… for this long")
	failRate := fs.Float64("fail-rate", 0, "probability that an attempt fails with -fail-status")
	failStatus := fs.Int("fail-status", gateway.DefaultFailureStatus, "status of a random failure")
	latency := fs.String("latency", "", "latency before answering: `D`, constant:D, uniform:MIN,MAX or exponential:MEAN[,MIN[,MAX]]")
	reject := fs.String("reject-field", "", "JSON `field` the validator rejects with a provider-style 400 (e.g. strict)")
	allowance := fs.Int("allowance", 0, "requests per minute per key; beyond, 429 with Retry-After (0: none)")
	allowanceHeader := fs.String("allowance-header", "", "header whose value is the allowance's key (default: the client)")
	streamEvents := fs.Int("stream-events", gateway.DefaultStreamEvents, "content deltas in a streamed answer")
	streamInterval := fs.Duration("stream-interval", 0, "pause between streamed events")
	stallRate := fs.Float64("stall-rate", 0, "fraction of streamed answers that stall")
	stallAfter := fs.Int("stall-after", 0, "events a stalling stream sends before it stalls")
	stallFor := fs.Duration("stall-for", 0, "how long a stall lasts (0: until the client goes away)")
	stallPing := fs.Duration("stall-ping", 0, "send an SSE ping this often during a stall (0: none)")
	clientHeader := fs.String("client-header", gateway.DefaultClientHeader, "header that names the client")
	requestHeader := fs.String("request-header", gateway.DefaultRequestHeader, "header that names the logical request")
	bare := fs.Bool("bare", false, "serve a bare handler that answers every request with the success body and counts nothing: the throughput baseline")
	if err := parse(fs, args); err != nil {
		return err
	}

	var cfg gateway.Config
	if *timeline != "" {
		var err error
		if cfg, err = gateway.LoadTimeline(*timeline); err != nil {
			return fmt.Errorf("%w: %v", errUsage, err)
		}
	}
	var bad error
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "window":
			cfg.Window = *window
		case "seed":
			cfg.Seed = *seed
		case "fail-rate":
			cfg.FailureRate = *failRate
		case "fail-status":
			cfg.FailureStatus = *failStatus
		case "latency":
			l, err := parseLatency(*latency)
			if err != nil {
				bad = err
			}
			cfg.Latency = l
		case "reject-field":
			cfg.RejectField = *reject
		case "allowance":
			cfg.Allowance = *allowance
		case "allowance-header":
			cfg.AllowanceHeader = *allowanceHeader
		case "stream-events":
			cfg.Stream.Events = *streamEvents
		case "stream-interval":
			cfg.Stream.Interval = *streamInterval
		case "stall-rate":
			cfg.Stream.StallRate = *stallRate
		case "stall-after":
			cfg.Stream.StallAfter = *stallAfter
		case "stall-for":
			cfg.Stream.StallFor = *stallFor
		case "stall-ping":
			cfg.Stream.StallPing = *stallPing
		case "client-header":
			cfg.ClientHeader = *clientHeader
		case "request-header":
			cfg.RequestHeader = *requestHeader
		}
	})
	if bad != nil {
		return fmt.Errorf("%w: %v", errUsage, bad)
	}
	for _, o := range outages {
		if *recoverBelow > 0 {
			o.Recovery = gateway.Recovery{Below: *recoverBelow, For: *recoverFor}
		}
		cfg.Outages = append(cfg.Outages, o)
	}
	cfg.Addr, cfg.AllowRemote = *addr, *allowRemote
	if err := cfg.Validate(); err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}

	g := gateway.New(cfg)
	ln, err := g.Listen()
	if err != nil {
		if errors.Is(err, gateway.ErrNotLoopback) {
			return fmt.Errorf("%w: %v", errUsage, err)
		}
		return err
	}
	url := "http://" + ln.Addr().String()
	if *bare {
		fmt.Fprintf(stdout, "recoil gateway: bare handler on %s (counts nothing)\n", url)
		return serveBare(ctx, ln)
	}
	fmt.Fprintf(stdout, "recoil gateway: serving on %s\n", url)
	fmt.Fprintf(stdout, "  dependency %s/v1/messages (any other path too) · page %s/ · stats %s/stats · metrics %s/metrics\n", url, url, url, url)
	for _, o := range g.Config().Outages {
		fmt.Fprintf(stdout, "  outage from %v for %v answering %d", o.Start, o.Duration, o.Status)
		if o.Recovery.Below > 0 {
			fmt.Fprintf(stdout, ", then until attempts per %v stay below %d for %v", g.Config().Window, o.Recovery.Below, o.Recovery.For)
		}
		fmt.Fprintln(stdout, " (times count from the first attempt)")
	}
	if err := g.Serve(ctx, ln); err != nil {
		return err
	}
	s := g.Stats()
	fmt.Fprintf(stdout, "counted: %d attempts, %d answered with a success, peak %d in one %v (sliding), from %d clients, %d logical requests\n",
		s.Attempts, s.Accepted, s.Peak, s.Window, len(s.Clients), len(s.Requests))
	return nil
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
