package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/recoil-go/recoil/gateway"
	"github.com/recoil-go/recoil/load"
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

func runLoad(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("load", stderr)
	target := fs.String("url", "", "the `URL` to drive (required), e.g. http://127.0.0.1:8080/v1/messages")
	callers := fs.Int("callers", 0, "closed-loop callers (default 1 unless -rate)")
	rate := fs.Float64("rate", 0, "open-loop arrivals per second, instead of -callers")
	policy := fs.String("policy", load.PresetDefault, "retry policy preset: "+strings.Join(load.Presets, ", "))
	policyFile := fs.String("policy-file", "", "YAML policy `file` (load.ParsePolicy), instead of -policy")
	until := fs.Bool("until-accepted", false, "each caller repeats logical requests, after -pause, until one is accepted (seed 004)")
	pause := fs.Duration("pause", load.DefaultPause, "a caller's pause before its next logical request after one not accepted (0: none)")
	requests := fs.Int("requests", load.DefaultMaxRequests, "at most this many logical requests")
	duration := fs.Duration("duration", load.DefaultDuration, "at most this long")
	timeout := fs.Duration("timeout", load.DefaultTimeout, "deadline of each logical request, waits included")
	method := fs.String("method", "", "request method (default GET, or POST with a body)")
	body := fs.String("body", "", "request body")
	bodyFile := fs.String("body-file", "", "read the request body from `file`")
	header := headerFlags{}
	fs.Var(header, "header", "a request header `Name: value`; repeatable")
	window := fs.Duration("window", gateway.DefaultWindow, "span the peak is counted over")
	seed := fs.Uint64("seed", 1, "seed for jitter and arrivals")
	asJSON := fs.Bool("json", false, "write the result as JSON")
	gwStats := fs.Bool("gateway-stats", false, "after the run, read what a recoil gateway at the URL's host counted (GET /stats) and report it beside the callers' counts")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *target == "" {
		return fmt.Errorf("%w: -url is required", errUsage)
	}
	if *body != "" && *bodyFile != "" {
		return fmt.Errorf("%w: -body and -body-file: give one", errUsage)
	}
	var p load.Policy
	var err error
	if *policyFile != "" {
		p, err = load.LoadPolicy(*policyFile)
	} else {
		p, err = load.Preset(*policy)
	}
	if err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	b := []byte(*body)
	if *bodyFile != "" {
		if b, err = os.ReadFile(*bodyFile); err != nil {
			return fmt.Errorf("%w: %v", errUsage, err)
		}
	}
	cfg := load.Config{
		URL: *target, Method: *method, Body: b, Header: http.Header(header),
		Callers: *callers, Rate: *rate, UntilAccepted: *until, Pause: *pause,
		MaxRequests: *requests, Duration: *duration, Timeout: *timeout,
		Policy: p, Window: *window, Seed: *seed,
	}
	if *pause == 0 {
		cfg.Pause = -1 // no pause asked for
	}
	if terminal(stderr) {
		cfg.Progress = func(p load.Progress) {
			fmt.Fprintf(stderr, "\r%6.1fs  calls %d  ok %d  failed %d  logical requests %d  attempts %d ",
				p.Elapsed.Seconds(), p.Calls, p.OK, p.Failed, p.Requests, p.Attempts)
		}
	}
	res, err := load.Run(ctx, cfg)
	if cfg.Progress != nil {
		fmt.Fprint(stderr, "\r\033[K")
	}
	if errors.Is(err, load.ErrConfig) {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	if res == nil {
		return err
	}
	var counted json.RawMessage
	if *gwStats {
		counted, err = gatewayStats(ctx, *target)
		if err != nil {
			fmt.Fprintf(stderr, "recoil load: -gateway-stats: %v\n", err)
		}
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		out := struct {
			Load    *load.Result    `json:"load"`
			Gateway json.RawMessage `json:"gateway,omitempty"`
		}{res, counted}
		if werr := enc.Encode(out); werr != nil {
			return werr
		}
		return err
	}
	if werr := load.WriteTable(stdout, res); werr != nil {
		return werr
	}
	fmt.Fprintln(stdout)
	if werr := load.WriteNotes(stdout, res); werr != nil {
		return werr
	}
	if counted != nil {
		var s struct {
			Attempts int64   `json:"attempts"`
			Accepted int64   `json:"accepted"`
			WindowMS float64 `json:"window_ms"`
			Peak     struct {
				Attempts int64 `json:"attempts"`
			} `json:"peak"`
			Clients map[string]json.RawMessage `json:"clients"`
		}
		if jerr := json.Unmarshal(counted, &s); jerr == nil {
			fmt.Fprintf(stdout, "the gateway counted, since its first attempt: %d attempts, %d answered with a success, peak %d per %vms, %d clients\n",
				s.Attempts, s.Accepted, s.Peak.Attempts, s.WindowMS, len(s.Clients))
		}
	}
	return err
}

// gatewayStats reads /stats from the gateway at target's host.
func gatewayStats(ctx context.Context, target string) (json.RawMessage, error) {
	u, err := url.Parse(target)
	if err != nil {
		return nil, err
	}
	u.Path, u.RawQuery = "/stats", "series=0"
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
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

// terminal reports whether w is a terminal, where progress may be shown.
func terminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
