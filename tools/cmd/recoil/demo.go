package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/recoil-go/recoil/tools/cmd/recoil/internal/demo"
	"github.com/recoil-go/recoil/tools/load"
)

func init() {
	register(command{"demo", "a 700 ms payment-gateway outage on real loopback HTTP, measured and simulated (the main job)", runDemo})
}

// Bounds of the demo's flags.
const (
	demoMaxCallers = 10_000
	demoMaxOutage  = time.Minute
	demoMaxRuns    = 100
)

// demoPolicies are the policies the demo compares, in its table's order:
// the load presets its help describes.
var demoPolicies = []string{load.PresetImmediate, load.PresetFullJitter, load.PresetDefault}

var demoHelp = help{
	usage: "recoil demo [flags]",
	about: `
Runs recoil's main demonstration on real loopback HTTP. A payment gateway in
this process (127.0.0.1, a free port) is down for 700 ms from the first
attempt; closed-loop callers each repeat their request until it is accepted,
through recoil's HTTP Transport, under three policies — retry immediately
(every 20 ms), exponential backoff with full jitter (60 ms base), and
recoil's default policy (classification, 3 attempts, full jitter, a retry
budget) plus a circuit breaker open for 1 s. The callers' first attempts
leave together. The gateway counts the attempts, the accepted requests and
the peak in any 200 ms window; each row is measured -runs times and shown as
its median and range. Before the rows at each number of callers, two short
runs against a gateway that is down throughout measure how many attempts
this machine can carry and how late it wakes a caller; the simulator then
predicts each run on a machine like that, with the run's seed and the same
random waits its callers drew, and the two are printed one above the other.
It predicts each run again on the machine idle and twice as late, and at
the pace measured again after the rows: where a measured median is off its
prediction, a note says what the simulator predicts across those machines
(an attempt a few milliseconds from the outage's end lands on either side
from run to run, and a busy machine's pace drifts).`,
	examples: `  recoil demo                          4 and 200 callers, a 700 ms outage
  recoil demo -callers 4 -outage 2s     four callers, a two-second outage
  recoil demo -callers 50 -o demo.svg   and a chart of attempts per window`,
	exit: `0 done; 1 a run failed; 2 usage error; 130 interrupted (Ctrl-C):
the rows measured so far are printed, the table headed INTERRUPTED (with
-json, stderr says so), and no chart is written.`,
}

func runDemo(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("demo", stdout, demoHelp)
	callers := fs.String("callers", "4,200", fmt.Sprintf("numbers of callers to run, comma-separated, each 1 to %d", demoMaxCallers))
	outage := fs.Duration("outage", 700*time.Millisecond, "how long the gateway is down, at most "+demoMaxOutage.String())
	seed := fs.Uint64("seed", 1, "seed for the callers' jitter and the simulation, 1 or more")
	runs := fs.Int("runs", demo.DefaultRuns, fmt.Sprintf("times each row is measured, for a median and a range, 1 to %d", demoMaxRuns))
	asJSON := fs.Bool("json", false, "print the results as one JSON object")
	chart := fs.String("o", "", "write a chart of attempts per window to `file` (SVG, or PNG for .png)")
	if err := fs.parse(args); err != nil {
		return err
	}
	if err := fs.noZero(map[string]string{"seed": "must be 1 or more"}); err != nil {
		return err
	}
	ns, err := parseCallers(*callers)
	if err != nil {
		return err
	}
	if *runs < 1 || *runs > demoMaxRuns {
		return usagef("-runs %d: must be from 1 to %d", *runs, demoMaxRuns)
	}
	if *outage <= 0 || *outage > demoMaxOutage {
		return usagef("-outage %v: must be more than 0s and at most %v", *outage, demoMaxOutage)
	}
	format := ""
	if *chart != "" {
		if format, err = chartFormat("-o", *chart); err != nil {
			return err
		}
	}
	out, err := checkOutput("-o", *chart)
	if err != nil {
		return err
	}

	cfg := demo.Config{Outage: *outage, Seed: *seed, Runs: *runs, Callers: ns, Policies: demoPolicies}
	if terminal(stderr) {
		cfg.Next = func(what string) { fmt.Fprintf(stderr, "next: %s…\n", what) }
	}
	var live *demo.Live
	if !*asJSON {
		// The table is written as the rows are measured.
		live = demo.NewLive(stdout, cfg.Outage, 0)
		live.Head()
		cfg.Measured, cfg.Predicted = live.Measured, live.Simulated
	}
	rep, err := demo.Run(ctx, cfg)
	return writeDemo(ctx, rep, err, len(ns)*len(demoPolicies), live, out, format, *chart, stdout, stderr)
}

// writeDemo ends the report of a demo of total rows that ended with err:
// the table's comparisons and notes below the rows live wrote (or, with
// live nil, the JSON), then the chart to out (named path), unless ctx
// ended first.
func writeDemo(ctx context.Context, rep *demo.Report, err error, total int, live *demo.Live, out *output, format, path string, stdout, stderr io.Writer) error {
	interrupted := ctx.Err() != nil
	if err != nil && !interrupted {
		return err
	}
	if rep == nil {
		rep = &demo.Report{}
	}
	if interrupted && live != nil {
		if len(rep.Rows) == 0 {
			fmt.Fprintf(stdout, "\nINTERRUPTED before the first of %d rows was measured: nothing to show.\n", total)
			return fmt.Errorf("%w before the first row was measured", errInterrupted)
		}
		fmt.Fprintf(stdout, "\nINTERRUPTED: %d of %d rows measured; the table shows those.\n", len(rep.Rows), total)
	}
	if live == nil {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		err = enc.Encode(rep)
	} else {
		err = live.Tail(rep)
	}
	if err != nil {
		return err
	}
	if interrupted {
		msg := fmt.Sprintf("%d of %d rows measured", len(rep.Rows), total)
		if out != nil {
			msg += "; no chart written"
		}
		return fmt.Errorf("%w: %s", errInterrupted, msg)
	}
	if err := out.write(func(w io.Writer) error { return rep.WriteChart(w, format) }); err != nil {
		return err
	}
	if out != nil {
		fmt.Fprintf(stderr, "chart written to %s\n", path)
	}
	return nil
}

// parseCallers reads -callers: positive numbers, comma-separated.
func parseCallers(s string) ([]int, error) {
	var ns []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 || n > demoMaxCallers {
			return nil, usagef("-callers %q: want numbers from 1 to %d, comma-separated", s, demoMaxCallers)
		}
		if slices.Contains(ns, n) {
			return nil, usagef("-callers %q: %d is listed twice", s, n)
		}
		ns = append(ns, n)
	}
	return ns, nil
}
