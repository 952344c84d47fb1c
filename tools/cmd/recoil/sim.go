package main

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/recoil-go/recoil/tools/cmd/recoil/internal/simchart"
	"github.com/recoil-go/recoil/tools/internal/textfmt"
	"github.com/recoil-go/recoil/tools/scenarios"
	"github.com/recoil-go/recoil/tools/sim"
)

func init() {
	register(command{"sim", "simulate a scenario on virtual time with the real policies: attempts, peaks, queues, 429s", runSim})
}

// Bounds of -window: a window below a millisecond, sampled over a long
// run, makes a time series too long to hold.
const (
	simMinWindow = time.Millisecond
	simMaxWindow = time.Minute
)

// The chart metrics simchart.Write draws over time, and those it draws
// against a numeric sweep.
var (
	timeMetrics  = []string{simchart.Attempts, simchart.Throttled, simchart.Succeeded, simchart.Queue, simchart.Busy}
	sweepMetrics = []string{simchart.Attempts, simchart.PerCall, simchart.Peak, simchart.P99, simchart.Max, simchart.Goodput, simchart.Failed}
)

var simHelp = help{
	usage: "recoil sim [flags] scenario.yaml|name",
	about: `
Runs a scenario — services, clients and the retry policies to compare — as a
discrete-event simulation in which every call drives recoil's real decision,
backoff, budget and breaker code on virtual time. The scenario is a YAML
file, or the name of a built-in one (recoil sim -list); copy a built-in one
out of the repository's scenarios directory to start your own. It prints a
table (or -json) on stdout; -csv writes the time series and -o draws a chart
(SVG, or PNG for a .png name), each written only once the simulation is done.
The same seed gives the same output.`,
	examples: `  recoil sim gateway-outage                       callers against a gateway that is down for 700 ms
  recoil sim -seed 7 -json blast-radius
  recoil sim -o queue.png -chart queue -service app blast-radius`,
	exit: `0 done; 1 the scenario could not be read or run; 2 usage error;
130 interrupted (Ctrl-C): the runs finished so far are printed, the table
headed INTERRUPTED (with -json, stderr says so), and no -csv or -o file is
written.`,
}

func runSim(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("sim", stdout, simHelp)
	seed := fs.Uint64("seed", 0, "seed of the random source, 1 or more (default: the scenario's seed, or 1)")
	asJSON := fs.Bool("json", false, "print the results as one JSON object instead of tables")
	csvPath := fs.String("csv", "", "write every service's time series as CSV to `file`")
	chartPath := fs.String("o", "", "draw a chart to `file`: SVG, or PNG if the name ends in .png")
	metric := fs.String("chart", "", "what the -o chart shows: over time "+strings.Join(timeMetrics, ", ")+
		";\nagainst a sweep of at least three numbers "+strings.Join(sweepMetrics, ", ")+" (default attempts)")
	service := fs.String("service", "", "the service a chart over time reads (default: the scenario's target)")
	window := fs.Duration("window", 0, fmt.Sprintf("width of the peak window, %v to %v (default: the scenario's, or 200ms)", simMinWindow, simMaxWindow))
	list := fs.Bool("list", false, "list the built-in scenarios and exit")
	wide := fs.Bool("wide", false, fmt.Sprintf("print each table whole, however wide (default: split into parts of at most %d characters)", sim.DefaultWidth))
	pos, err := fs.parseInterspersed(args)
	if err != nil {
		return err
	}
	if *list {
		if other := fs.givenAny("seed", "json", "csv", "o", "chart", "service", "window", "wide"); other != "" {
			return usagef("-list prints the built-in scenarios; it takes no -%s", other)
		}
		if len(pos) > 0 {
			return usagef("-list prints the built-in scenarios; it takes no scenario (%q)", pos[0])
		}
		return listScenarios(stdout)
	}
	if err := checkSimFlags(fs, pos, *window); err != nil {
		return err
	}
	if *wide && *asJSON {
		return usagef("-wide sets how wide the tables are; -json prints none")
	}
	format := ""
	if *chartPath != "" {
		if format, err = chartFormat("-o", *chartPath); err != nil {
			return err
		}
	}
	chartOut, err := checkOutput("-o", *chartPath)
	if err != nil {
		return err
	}
	csvOut, err := checkOutput("-csv", *csvPath)
	if err != nil {
		return err
	}
	if chartOut != nil && csvOut != nil && chartOut.real == csvOut.real {
		return usagef("-o and -csv name the same file, %s", *csvPath)
	}
	s, err := loadScenario(pos[0])
	if err != nil {
		return err
	}
	if err := s.Validate(); err != nil {
		return err
	}
	opts := simchart.Options{Format: format, Metric: *metric, Service: *service}
	if chartOut != nil {
		if err := checkChart(s, opts); err != nil {
			return err
		}
	}

	bar := newProgress(stderr)
	res, err := sim.Run(ctx, s, sim.Options{Seed: *seed, Window: *window, Progress: bar.update})
	bar.done()
	width := sim.DefaultWidth
	if *wide {
		width = 0
	}
	return writeSim(ctx, runsOf(s), res, err, simOutputs{asJSON: *asJSON, width: width, csv: csvOut, chart: chartOut, opts: opts}, stdout)
}

// simOutputs are where recoil sim writes a result, and the chart's options.
type simOutputs struct {
	asJSON     bool
	width      int // of the tables; 0 for as wide as they are
	csv, chart *output
	opts       simchart.Options
}

// writeSim writes the result of a run of total runs that ended with err:
// the tables or JSON, then the CSV and the chart, unless ctx ended first.
func writeSim(ctx context.Context, total int, res *sim.Result, err error, out simOutputs, stdout io.Writer) error {
	interrupted := ctx.Err() != nil
	if err != nil && !interrupted {
		return err
	}
	if interrupted && !out.asJSON {
		if res == nil || len(res.Runs) == 0 {
			fmt.Fprintf(stdout, "INTERRUPTED before the first of %d runs finished: nothing to show.\n", total)
			return fmt.Errorf("%w before the first run finished", errInterrupted)
		}
		fmt.Fprintf(stdout, "INTERRUPTED: %d of %d runs finished; the tables show those.\n\n", len(res.Runs), total)
	}
	if res != nil {
		if out.asJSON {
			err = res.WriteJSON(stdout)
		} else {
			err = res.WriteTextWidth(stdout, out.width)
		}
		if err != nil {
			return err
		}
	}
	if interrupted {
		n := 0
		if res != nil {
			n = len(res.Runs)
		}
		msg := fmt.Sprintf("%d of %d runs finished", n, total)
		if out.chart != nil || out.csv != nil {
			msg += "; no -o or -csv file written"
		}
		return fmt.Errorf("%w: %s", errInterrupted, msg)
	}
	if err := out.csv.write(res.WriteCSV); err != nil {
		return err
	}
	return out.chart.write(func(w io.Writer) error { return simchart.Write(w, res, out.opts) })
}

// checkSimFlags checks the scenario arguments and the flags that need no
// scenario.
func checkSimFlags(fs *flags, pos []string, window time.Duration) error {
	switch {
	case len(pos) == 0:
		return usagef("name a scenario file or a built-in scenario (%s)", strings.Join(builtinScenarios(), ", "))
	case len(pos) > 1:
		return usagef("unexpected argument %q", pos[1])
	}
	if err := fs.noZero(map[string]string{
		"seed":   "must be 1 or more",
		"window": fmt.Sprintf("must be %v to %v", simMinWindow, simMaxWindow),
	}); err != nil {
		return err
	}
	if fs.given("window") && (window < simMinWindow || window > simMaxWindow) {
		return usagef("-window %v: must be %v to %v", window, simMinWindow, simMaxWindow)
	}
	if !fs.given("o") {
		if f := fs.givenAny("chart", "service"); f != "" {
			return usagef("-%s chooses what the -o chart shows; give -o too", f)
		}
	}
	return nil
}

// checkChart checks, before the simulation, that the chart o asks for can
// be drawn for scenario s, as simchart.Write draws it: a metric
// over time of a service of the scenario, or a metric against a sweep of
// at least three numbers.
func checkChart(s *sim.Scenario, o simchart.Options) error {
	metric := o.Metric
	if metric == "" {
		metric = simchart.Attempts
	}
	overTime := slices.Contains(timeMetrics, metric)
	swept := slices.Contains(sweepMetrics, metric) && numericSweep(s.Sweep)
	switch {
	case !overTime && !slices.Contains(sweepMetrics, metric):
		return usagef("-chart %s: want one of %s over time, or %s against a sweep",
			o.Metric, strings.Join(timeMetrics, ", "), strings.Join(sweepMetrics, ", "))
	case !overTime && !swept:
		return usagef("-chart %s is drawn against a sweep of at least three numbers, which scenario %s does not have; over time, want one of %s",
			metric, s.Name, strings.Join(timeMetrics, ", "))
	case swept && o.Service != "":
		return usagef("-service %s: the -chart %s chart is drawn against the sweep, for the target; -service chooses the service of a chart over time", o.Service, metric)
	}
	if o.Service != "" {
		var names []string
		for _, svc := range s.Services {
			if svc.Name == o.Service {
				return nil
			}
			names = append(names, svc.Name)
		}
		return usagef("-service %s: scenario %s has no such service (it has %s)", o.Service, s.Name, strings.Join(names, ", "))
	}
	return nil
}

// sweepValues returns a sweep's values as sim generates them: the listed
// ones, or From to To by Step.
func sweepValues(sw *sim.Sweep) []string {
	if sw == nil {
		return nil
	}
	if len(sw.Values) > 0 {
		return sw.Values
	}
	var out []string
	for i := 0; sw.Step > 0 && i <= 10000; i++ {
		x := sw.From + float64(i)*sw.Step
		if x > sw.To+sw.Step*1e-9 {
			break
		}
		out = append(out, strconv.FormatFloat(math.Round(x*1e9)/1e9, 'g', -1, 64))
	}
	return out
}

// numericSweep reports whether a sweep has at least three distinct
// numbers, which sim charts a sweep metric against.
func numericSweep(sw *sim.Sweep) bool {
	seen := map[string]bool{}
	for _, v := range sweepValues(sw) {
		if _, err := strconv.ParseFloat(v, 64); err != nil {
			return false
		}
		seen[v] = true
	}
	return len(seen) >= 3
}

// runsOf returns how many runs sim.Run makes of s: one per sweep value and
// compared policy.
func runsOf(s *sim.Scenario) int {
	return max(len(sweepValues(s.Sweep)), 1) * max(len(s.Policies), 1)
}

func listScenarios(stdout io.Writer) error {
	for _, n := range builtinScenarios() {
		s, err := loadScenario(n)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%-16s %s\n", n, strings.ReplaceAll(textfmt.Wrap(s.Description, sim.DefaultWidth-17, ""), "\n", "\n"+strings.Repeat(" ", 17)))
	}
	return nil
}

// loadScenario reads a scenario file, or a built-in scenario by name.
func loadScenario(arg string) (*sim.Scenario, error) {
	if _, err := os.Stat(arg); err == nil {
		return sim.Load(arg)
	}
	name := strings.TrimSuffix(arg, ".yaml") + ".yaml"
	data, err := scenarios.FS.ReadFile(name)
	if err != nil {
		return nil, usagef("no scenario file or built-in scenario %q (built-in: %s)", arg, strings.Join(builtinScenarios(), ", "))
	}
	return sim.Parse(name, data)
}

func builtinScenarios() []string {
	var names []string
	entries, _ := fs.ReadDir(scenarios.FS, ".")
	for _, e := range entries {
		if n, ok := strings.CutSuffix(e.Name(), ".yaml"); ok {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	return names
}

// progress draws a bar on stderr while a long simulation runs, only when
// stderr is a terminal and only once a run has taken a second.
type progress struct {
	w     io.Writer
	start time.Time
	last  time.Time
	drawn bool
}

func newProgress(stderr io.Writer) *progress {
	if !terminal(stderr) {
		return nil
	}
	return &progress{w: stderr, start: time.Now()}
}

func (p *progress) update(done float64) {
	if p == nil {
		return
	}
	now := time.Now()
	if now.Sub(p.start) < time.Second || now.Sub(p.last) < 100*time.Millisecond {
		return
	}
	p.last = now
	const width = 40
	n := int(done*width + 0.5)
	n = min(max(n, 0), width)
	fmt.Fprintf(p.w, "\r[%s%s] %3.0f%%", strings.Repeat("#", n), strings.Repeat(".", width-n), done*100)
	p.drawn = true
}

func (p *progress) done() {
	if p != nil && p.drawn {
		fmt.Fprint(p.w, "\r\033[K")
	}
}
