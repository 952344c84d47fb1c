package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/recoil-go/recoil/recoilprom"
	"github.com/recoil-go/recoil/tools/gateway"
	"github.com/recoil-go/recoil/tools/load"
	"github.com/recoil-go/recoil/tools/policyspec"
	"github.com/recoil-go/recoil/tools/tally"
)

func init() {
	register(command{"load", "drive a URL with callers retrying through a recoil Transport; count what they sent", runLoad})
}

// headerFlags collects -header values, "Name: value".
type headerFlags http.Header

func (h headerFlags) String() string { return "" }

func (h headerFlags) Set(v string) error {
	name, value, ok := strings.Cut(v, ":")
	if !ok || strings.TrimSpace(name) == "" {
		return fmt.Errorf("%q: want Name: value", v)
	}
	http.Header(h).Add(strings.TrimSpace(name), strings.TrimSpace(value))
	return nil
}

var loadHelp = help{
	usage: "recoil load -url URL [flags]",
	about: `
Drives URL with callers whose every logical request goes through a retrying
recoil HTTP Transport, and counts what they sent: the attempts, the peak in
any window, the calls that got through and when, latency percentiles, and
why the rest did not — the statuses that came back, and for attempts that
got no response the kind of transport error (connection refused, DNS lookup
failed, TLS error, timeout, …) with the first one's message. Callers run in
a closed loop (-callers) or arrive at a rate (-rate); with -until-accepted
each repeats its request, after -pause, until one is accepted. A run ends
after -requests logical requests or -duration, whichever comes first (given
-duration alone, a run lasts it).`,
	examples: `  recoil load -url http://127.0.0.1:8080/v1/charges -callers 4 -until-accepted -policy immediate -gateway-stats
  recoil load -url http://127.0.0.1:8080/v1/charges -body '{"amount":100}' -callers 8 -requests 200 -gateway-stats -idempotency-keys=false
  recoil load -url http://127.0.0.1:8080/v1/messages -rate 50 -duration 30s -body '{"model":"m"}' -json
  recoil load -url https://api.example.com/health -policy-file patient.yaml -requests 100
  recoil load -url http://127.0.0.1:8080/primary/v1/messages -body '{"model":"m"}' -callers 8 -duration 14s \
      -policy-file fallback-chain.yaml -upstream primary=http://127.0.0.1:8080/primary -upstream backup=http://127.0.0.1:8080/backup
  recoil load -url http://127.0.0.1:8080/v1/messages -callers 64 -duration 60s -requests 1000000 \
      -policy-file adaptive.yaml -chart limit.svg -knee 16`,
	notes: `
The -policy presets: immediate retries every 20 ms whatever failed, up to
1000 attempts; wrapper is a five-attempt wrapper retrying anything that is
not a 2xx, its waits doubling from 1 s; exponential waits 60 ms doubling to a
10 s cap, up to 8 attempts; full-jitter is the same with full jitter; none of
these has a retry budget. default is recoil's default — classification, 3
attempts, full jitter, Retry-After honoured, a retry budget the callers
share — with a circuit breaker that opens for 1 s.

Start a gateway to drive with "recoil gateway -outage 700ms" (a 700 ms
payment-gateway outage) and pass the address it prints to -url.

A policy file with a fallback chain names, for each target, the upstream it
reaches; -upstream gives each name its base URL (a target whose upstream is
a URL needs none). A target's attempts go to its base URL joined with -url's
path relative to the first target's base path, so -url should lie under the
first target's. Against "recoil gateway -target primary=... -target backup",
the bases are the gateway's address with /primary and /backup.

Against a gateway started with -charge-drop-rate (connections dropped after
the charge) and -charge-idempotency, -gateway-stats reports the charges
made and the duplicates: some with -idempotency-keys=false, none with the
keys the callers send by default.`,
	exit: `0 at least one request was accepted; 1 none was (the reason is printed:
connection refused, error statuses, …) or the run failed; 2 usage error;
130 interrupted (Ctrl-C): what was counted so far is printed, the table
headed INTERRUPTED (in -json, "stopped": "canceled").`,
}

// loadFields maps a load.Config field to the flag that sets it, so that an
// invalid value is reported against the flag.
var loadFields = map[string]string{
	"URL": "url", "Method": "method", "Body": "body", "Header": "header",
	"Callers": "callers", "Rate": "rate", "Pause": "pause", "MaxRequests": "requests",
	"Duration": "duration", "Timeout": "timeout", "Window": "window",
}

func runLoad(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, o := newLoadFlags(stdout)
	if err := fs.parse(args); err != nil {
		return err
	}
	if err := checkLoadFlags(fs, *o.target, *o.pause); err != nil {
		return err
	}
	if fs.given("duration") && !fs.given("requests") {
		*o.requests = load.MaxLogicalRequests // a run given a -duration lasts it
	}
	cfg, err := o.config()
	if err != nil {
		return err
	}
	chartOut, format, knee, err := o.checkChart(cfg)
	if err != nil {
		return err
	}
	o.chart, o.chartFormat, o.knee = chartOut, format, knee
	if *o.metricsAddr != "" {
		stop, err := serveLoadMetrics(*o.metricsAddr, cfg.Policy, stderr)
		if err != nil {
			return err
		}
		defer stop()
	}
	if terminal(stderr) {
		cfg.Progress = func(p load.Progress) {
			fmt.Fprintf(stderr, "\r%6.1fs  calls %d  ok %d  failed %d  logical requests %d  attempts %d  no response %d ",
				p.Elapsed.Seconds(), p.Calls, p.OK, p.Failed, p.Requests, p.Attempts, p.TransportErrors)
		}
	}
	return o.run(ctx, cfg, stdout, stderr)
}

// loadOptions are recoil load's flags.
type loadOptions struct {
	target, policy, policyFile, method, body, bodyFile, metricsAddr *string
	chartPath, kneeOf                                               *string
	callers, requests                                               *int
	rate                                                            *float64
	until, asJSON, gwStats, keys                                    *bool
	pause, duration, timeout, window                                *time.Duration
	seed                                                            *uint64
	header                                                          headerFlags
	upstreams                                                       upstreamFlags

	chart       *output // -chart, checked before the run
	chartFormat string
	knee        int
}

// checkChart checks -chart and -knee before the run: a chart needs a
// limiter whose limit moves, and a file that can be written.
func (o *loadOptions) checkChart(cfg load.Config) (*output, string, int, error) {
	knee := 0
	if *o.kneeOf != "" {
		n, err := strconv.Atoi(*o.kneeOf)
		if err != nil || n < 1 {
			return nil, "", 0, usagef("-knee %s: want a whole number of requests in flight, 1 or more", *o.kneeOf)
		}
		if *o.chartPath == "" {
			return nil, "", 0, usagef("-knee is drawn on the chart; give -chart too")
		}
		knee = n
	}
	if *o.chartPath == "" {
		return nil, "", 0, nil
	}
	if !load.LimitMoves(cfg.Policy) {
		return nil, "", 0, usagef("-chart %s: draws an adaptive limiter's limit, and policy %s has none (limiter: adaptive in a policy file)", *o.chartPath, cfg.Policy.Name)
	}
	format, err := chartFormat("-chart", *o.chartPath)
	if err != nil {
		return nil, "", 0, err
	}
	out, err := checkOutput("-chart", *o.chartPath)
	return out, format, knee, err
}

// newLoadFlags defines recoil load's flags.
func newLoadFlags(stdout io.Writer) (*flags, *loadOptions) {
	fs := newFlags("load", stdout, loadHelp)
	o := &loadOptions{header: headerFlags{}, upstreams: upstreamFlags{}}
	o.target = fs.String("url", "", "the `URL` to drive (required), e.g. http://127.0.0.1:8080/v1/messages")
	o.callers = fs.Int("callers", 0, fmt.Sprintf("closed-loop callers, 1 to %d (default 1 unless -rate)", load.MaxCallers))
	o.rate = fs.Float64("rate", 0, fmt.Sprintf("open-loop arrivals per second, more than 0 and at most %d, instead of -callers", load.MaxRate))
	o.policy = fs.String("policy", load.PresetDefault, "retry policy preset: "+strings.Join(policyspec.Presets(), ", "))
	o.policyFile = fs.String("policy-file", "", "YAML policy `file` (load.ParsePolicy), instead of -policy")
	o.until = fs.Bool("until-accepted", false, "each caller repeats logical requests, after -pause, until one is accepted")
	o.pause = fs.Duration("pause", load.DefaultPause, "a caller's pause before its next logical request after one not accepted (0: none)")
	o.requests = fs.Int("requests", load.DefaultMaxRequests, fmt.Sprintf("at most this many logical requests, 1 to %d; with -duration alone, %d", load.MaxLogicalRequests, load.MaxLogicalRequests))
	o.duration = fs.Duration("duration", load.DefaultDuration, fmt.Sprintf("at most this long, up to %v", load.MaxDuration))
	o.timeout = fs.Duration("timeout", load.DefaultTimeout, fmt.Sprintf("deadline of each logical request, waits included, up to %v", load.MaxDuration))
	o.method = fs.String("method", "", "request method (default GET, or POST with a body)")
	o.body = fs.String("body", "", "request body")
	o.bodyFile = fs.String("body-file", "", fmt.Sprintf("read the request body from `file` (at most %d MiB)", load.MaxBody>>20))
	fs.Var(o.header, "header", "a request header `Name: value`; repeatable")
	o.chartPath = fs.String("chart", "", "draw an adaptive limiter's limit over the run, and the attempts in flight, to `file` (.svg or .png); the policy's limiter must be adaptive")
	o.kneeOf = fs.String("knee", "", "with -chart, draw this `N` as the knee: the concurrency past which the dependency only slows (a gateway's latency.knee)")
	fs.Var(o.upstreams, "upstream", "the base URL of an upstream the policy's fallback targets name: `NAME=URL`, e.g. backup=http://127.0.0.1:8080/backup; repeatable")
	o.window = fs.Duration("window", tally.DefaultWindow, fmt.Sprintf("span the peak is counted over, %v to %v", tally.MinWindow, tally.MaxWindow))
	o.seed = fs.Uint64("seed", 1, "seed for jitter and arrivals")
	o.asJSON = fs.Bool("json", false, "write the result as JSON")
	o.gwStats = fs.Bool("gateway-stats", false, "after the run, read what a recoil gateway at the URL's host counted (GET /stats) and report it beside the callers' counts")
	o.metricsAddr = fs.String("metrics-addr", "", "while the run lasts, serve Prometheus metrics of the callers' retries (recoil_attempts_total, recoil_stops_total, …) at http://`host:port`/metrics")
	o.keys = fs.Bool("idempotency-keys", true, "send each POST with an Idempotency-Key, the same on every attempt; =false sends none and retries POSTs anyway, as a retry loop unaware of keys does")
	return fs, o
}

// config returns the run the flags ask for, validated: a usage error names
// the flag at fault.
func (o *loadOptions) config() (load.Config, error) {
	var p load.Policy
	var err error
	if *o.policyFile != "" {
		if p, err = load.LoadPolicy(*o.policyFile); err != nil {
			return load.Config{}, usagef("-policy-file %s: %v", *o.policyFile, err)
		}
	} else if p, err = load.Preset(*o.policy); err != nil {
		return load.Config{}, usagef("-policy %s: %v", *o.policy, err)
	}
	if len(o.upstreams) > 0 || len(p.Upstreams()) > 0 {
		if p, err = p.WithUpstreams(o.upstreams); err != nil {
			return load.Config{}, usagef("-upstream: %v", err)
		}
	}
	b := []byte(*o.body)
	if *o.bodyFile != "" {
		if b, err = readBody(*o.bodyFile); err != nil {
			return load.Config{}, err
		}
	}
	cfg := load.Config{
		URL: *o.target, Method: *o.method, Body: b, Header: http.Header(o.header),
		Callers: *o.callers, Rate: *o.rate, UntilAccepted: *o.until, Pause: *o.pause,
		MaxRequests: *o.requests, Duration: *o.duration, Timeout: *o.timeout,
		Policy: p, Window: *o.window, Seed: *o.seed, NoIdempotencyKey: !*o.keys,
	}
	if *o.pause == 0 {
		cfg.Pause = -1 // no pause asked for
	}
	if err := cfg.Validate(); err != nil {
		var ce *load.ConfigError
		if errors.As(err, &ce) && loadFields[ce.Field] != "" {
			return load.Config{}, usagef("-%s %v: %s", loadFields[ce.Field], ce.Value, ce.Reason)
		}
		return load.Config{}, usagef("%v", err)
	}
	if *o.gwStats {
		// A recoil gateway answers GET / with its live page and counts
		// nothing there: a run at it would measure the page.
		if u, uerr := url.Parse(*o.target); uerr == nil && (u.Path == "" || u.Path == "/") &&
			(cfg.Method == "" || cfg.Method == http.MethodGet || cfg.Method == http.MethodHead) && len(b) == 0 {
			return load.Config{}, usagef("-url %s: a recoil gateway serves its live page at /, which it does not count as an attempt; send the attempts to another path, such as %s",
				*o.target, strings.TrimSuffix(*o.target, "/")+"/v1/charges")
		}
	}
	return cfg, nil
}

// How long recoil load waits for a gateway's stats (-gateway-stats) after
// its run; after an interrupt, less, so that it still returns within a
// second of the interrupt.
const (
	statsWait            = 5 * time.Second
	statsWaitInterrupted = 500 * time.Millisecond
)

// run runs cfg, with what the gateway counted if -gateway-stats, and
// writes the result.
func (o *loadOptions) run(ctx context.Context, cfg load.Config, stdout, stderr io.Writer) error {
	var before json.RawMessage
	if *o.gwStats {
		// What the gateway had counted before, so that its charges can be
		// told per run; a gateway that cannot be read yet is read after.
		before, _ = gatewayStats(ctx, *o.target, time.Second)
	}
	res, err := load.Run(ctx, cfg)
	if cfg.Progress != nil {
		fmt.Fprint(stderr, "\r\033[K")
	}
	interrupted := ctx.Err() != nil
	if res == nil {
		return err
	}
	var counted json.RawMessage
	if *o.gwStats {
		wait := statsWait
		if interrupted {
			wait = statsWaitInterrupted
		}
		var serr error
		if counted, serr = gatewayStats(ctx, *o.target, wait); serr != nil {
			fmt.Fprintf(stderr, "recoil load: -gateway-stats: %v\n", serr)
		}
	}
	if err := writeLoad(stdout, res, counted, chargesDuring(before, counted), *o.asJSON, interrupted); err != nil {
		return err
	}
	if err := o.chart.write(func(w io.Writer) error { return limitChart(res, o.knee).WriteTo(w, o.chartFormat) }); err != nil {
		return err
	}
	switch {
	case interrupted:
		msg := fmt.Sprintf("%d of %d logical requests accepted", res.Accepted, res.Requests)
		if d := res.Diagnosis(); res.Accepted == 0 && d != "" {
			msg += "; " + d
		}
		return fmt.Errorf("%w after %v: %s", errInterrupted, res.Elapsed.Round(time.Millisecond), msg)
	case err != nil:
		return err
	case res.Accepted == 0:
		return fmt.Errorf("nothing was accepted: %s", res.Diagnosis())
	}
	return nil
}

// serveLoadMetrics makes p report to recoilprom metrics served at addr
// until the returned stop is called. The policy's name labels the series
// ("load" when the name is not a valid label value). An address that cannot
// be listened on is a usage error: nothing has been sent yet.
func serveLoadMetrics(addr string, p load.Policy, stderr io.Writer) (stop func(), err error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, usagef("-metrics-addr %s: %v", addr, err)
	}
	m := recoilprom.NewMetrics()
	reg := prometheus.NewRegistry()
	reg.MustRegister(m)
	obs, err := m.Policy(p.Name)
	if err != nil {
		obs, _ = m.Policy("load")
	}
	obs.Instrument(p.Policy)
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	fmt.Fprintf(stderr, "recoil load: metrics at http://%s/metrics while the run lasts\n", ln.Addr())
	return func() { _ = srv.Close() }, nil
}

// checkLoadFlags rejects what the flags alone get wrong: a missing -url,
// flags that would be silently replaced by a default or ignored.
func checkLoadFlags(fs *flags, target string, pause time.Duration) error {
	if target == "" {
		return usagef("-url is required")
	}
	if err := fs.noZero(map[string]string{
		"callers":  fmt.Sprintf("must be 1 to %d", load.MaxCallers),
		"rate":     fmt.Sprintf("must be more than 0 and at most %d per second", load.MaxRate),
		"requests": fmt.Sprintf("must be 1 to %d", load.MaxLogicalRequests),
		"duration": fmt.Sprintf("must be more than 0s and at most %v", load.MaxDuration),
		"timeout":  fmt.Sprintf("must be more than 0s and at most %v", load.MaxDuration),
		"window":   fmt.Sprintf("must be %v to %v", tally.MinWindow, tally.MaxWindow),
	}); err != nil {
		return err
	}
	switch {
	case fs.given("callers") && fs.given("rate"):
		return usagef("-callers and -rate: give one (callers in a closed loop, or arrivals at a rate)")
	case fs.given("policy") && fs.given("policy-file"):
		return usagef("-policy and -policy-file: give one")
	case fs.given("body") && fs.given("body-file"):
		return usagef("-body and -body-file: give one")
	case pause < 0:
		return usagef("-pause %v: must be 0s (no pause) or more", pause)
	case fs.given("pause") && fs.given("rate") && !fs.given("until-accepted"):
		return usagef("-pause is how long a caller waits before trying again; open-loop arrivals (-rate) try again only with -until-accepted")
	}
	return nil
}

// readBody reads -body-file, at most load.MaxBody bytes.
func readBody(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, usagef("-body-file %s: %v", path, pathErr(err))
	}
	defer f.Close()
	// A regular file too big is refused by its size, without reading it.
	if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() && fi.Size() > load.MaxBody {
		return nil, usagef("-body-file %s: more than %d MiB", path, load.MaxBody>>20)
	}
	b, err := io.ReadAll(io.LimitReader(f, load.MaxBody+1))
	switch {
	case err != nil:
		return nil, usagef("-body-file %s: %v", path, pathErr(err))
	case len(b) > load.MaxBody:
		return nil, usagef("-body-file %s: more than %d MiB", path, load.MaxBody>>20)
	}
	return b, nil
}

// chargesDuring returns the charges the gateway counted between two reads
// of its /stats, or nil if either is missing or has none. Each run's
// logical requests have ids of their own, so the difference in requests
// charged more than once is this run's.
func chargesDuring(before, after json.RawMessage) *gateway.ChargeStats {
	var b, a struct {
		Charges *gateway.ChargeStats `json:"charges"`
	}
	if before == nil || after == nil || json.Unmarshal(before, &b) != nil || json.Unmarshal(after, &a) != nil || b.Charges == nil || a.Charges == nil {
		return nil
	}
	d := *a.Charges
	d.Effects -= min(b.Charges.Effects, d.Effects)
	d.Duplicates -= min(b.Charges.Duplicates, d.Duplicates)
	d.Doubled -= min(b.Charges.Doubled, d.Doubled)
	d.Dropped -= min(b.Charges.Dropped, d.Dropped)
	return &d
}

// writeLoad writes the result: JSON, or the table and its notes, and what
// the gateway counted if it was read, with the charges of its charge route
// during the run. An interrupted run's table is labelled as such (its
// JSON says "stopped": "canceled").
func writeLoad(w io.Writer, res *load.Result, counted json.RawMessage, charges *gateway.ChargeStats, asJSON, interrupted bool) error {
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(struct {
			Load    *load.Result         `json:"load"`
			Gateway json.RawMessage      `json:"gateway,omitempty"`
			Charges *gateway.ChargeStats `json:"charges_during_run,omitempty"`
		}{res, counted, charges})
	}
	if interrupted {
		if _, err := fmt.Fprintf(w, "INTERRUPTED after %v: what the callers counted until then.\n\n", res.Elapsed.Round(time.Millisecond)); err != nil {
			return err
		}
	}
	if err := load.WriteTable(w, res); err != nil {
		return err
	}
	fmt.Fprintln(w)
	if err := load.WriteNotes(w, res); err != nil {
		return err
	}
	if counted != nil {
		writeCounted(w, counted)
	}
	if c := charges; c != nil && c.Effects > 0 {
		fmt.Fprintf(w, "charges during this run (%s, Idempotency-Key %s): %d made, %d duplicates (%d logical requests charged more than once), %d connections dropped after the charge\n",
			c.Path, honoured(c.Idempotency), c.Effects, c.Duplicates, c.Doubled, c.Dropped)
	}
	return nil
}

// writeCounted writes what a gateway's /stats says it counted: one
// gateway's, or each target's of a gateway serving several (-target).
func writeCounted(w io.Writer, counted json.RawMessage) {
	type stats struct {
		Attempts int64   `json:"attempts"`
		Accepted int64   `json:"accepted"`
		WindowMS float64 `json:"window_ms"`
		Peak     struct {
			Attempts int64 `json:"attempts"`
		} `json:"peak"`
		Clients map[string]json.RawMessage `json:"clients"`
	}
	var set struct {
		Targets []struct {
			Name  string `json:"name"`
			Stats stats  `json:"stats"`
		} `json:"targets"`
	}
	if json.Unmarshal(counted, &set) == nil && len(set.Targets) > 0 {
		for _, t := range set.Targets {
			s := t.Stats
			fmt.Fprintf(w, "the gateway's target %s counted, since its first attempt: %d attempts, %d answered with a success, peak %d per %vms\n",
				t.Name, s.Attempts, s.Accepted, s.Peak.Attempts, s.WindowMS)
		}
		return
	}
	var s stats
	if json.Unmarshal(counted, &s) == nil {
		fmt.Fprintf(w, "the gateway counted, since its first attempt: %d attempts, %d answered with a success, peak %d per %vms, %d clients\n",
			s.Attempts, s.Accepted, s.Peak.Attempts, s.WindowMS, len(s.Clients))
	}
}

// upstreamFlags collects -upstream NAME=URL values.
type upstreamFlags map[string]string

func (u upstreamFlags) String() string { return "" }

func (u upstreamFlags) Set(v string) error {
	name, base, ok := strings.Cut(v, "=")
	switch {
	case !ok || name == "" || base == "":
		return fmt.Errorf("%q: want NAME=URL, the base URL of the upstream a fallback target names", v)
	case u[name] != "":
		return fmt.Errorf("%q: upstream %s is given twice", v, name)
	}
	u[name] = base
	return nil
}

// gatewayStats reads /stats from the gateway at target's host.
func gatewayStats(ctx context.Context, target string, wait time.Duration) (json.RawMessage, error) {
	u, err := url.Parse(target)
	if err != nil {
		return nil, err
	}
	u.Path, u.RawQuery = "/stats", "series=0"
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), wait)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	resp, err := tr.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK || !json.Valid(b) {
		return nil, fmt.Errorf("%s: %s, not a recoil gateway's stats", u, resp.Status)
	}
	return b, nil
}
