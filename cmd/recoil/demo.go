package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/recoil-go/recoil/internal/demo"
)

func runDemo(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("demo", stderr)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), `usage: recoil demo [flags]

Seed 004's experiment, done on real loopback HTTP: a gateway in this process
(127.0.0.1, a free port) is down for 700 ms from the first attempt; closed-loop
callers each repeat their request until it is accepted, through recoil's HTTP
Transport, under three policies — retry immediately (every 20 ms), exponential
backoff with full jitter (60 ms base), and the recoil default (classification,
a retry budget and a circuit breaker). The gateway counts the attempts, the
accepted requests and the peak in any 200 ms window; the simulator then
predicts the same setup, and the two are printed side by side.

Flags:
`)
		fs.PrintDefaults()
	}
	callers := fs.String("callers", "4,200", "numbers of callers to run, comma-separated")
	outage := fs.Duration("outage", 700*time.Millisecond, "how long the gateway is down")
	seed := fs.Uint64("seed", 1, "seed for the callers' jitter and the simulation")
	asJSON := fs.Bool("json", false, "print the results as one JSON object")
	chart := fs.String("o", "", "write a chart of attempts per window to `file` (SVG, or PNG for .png)")
	if err := parse(fs, args); err != nil {
		return err
	}
	var ns []int
	for _, f := range strings.Split(*callers, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 || n > 10000 {
			return fmt.Errorf("%w: -callers %q: want positive numbers up to 10000, comma-separated", errUsage, *callers)
		}
		ns = append(ns, n)
	}
	if *outage <= 0 || *outage > time.Minute {
		return fmt.Errorf("%w: -outage %v: want more than 0 and at most a minute", errUsage, *outage)
	}
	format := ""
	if *chart != "" {
		switch strings.ToLower(filepath.Ext(*chart)) {
		case ".svg":
			format = "svg"
		case ".png":
			format = "png"
		default:
			return fmt.Errorf("%w: -o %q: the chart's name must end in .svg or .png", errUsage, *chart)
		}
	}
	cfg := demo.Config{Callers: ns, Outage: *outage, Seed: *seed}
	if terminal(stderr) {
		cfg.Progress = func(n int, policy string) {
			fmt.Fprintf(stderr, "\r%-60s", fmt.Sprintf("running %s at %d callers…", policy, n))
		}
	}
	rep, err := demo.Run(ctx, cfg)
	if cfg.Progress != nil {
		fmt.Fprintf(stderr, "\r%-60s\r", "")
	}
	if err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		err = enc.Encode(rep)
	} else {
		err = rep.WriteText(stdout)
	}
	if err != nil || *chart == "" {
		return err
	}
	f, err := os.Create(*chart)
	if err != nil {
		return err
	}
	if err := rep.WriteChart(f, format); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "chart written to %s\n", *chart)
	return nil
}
