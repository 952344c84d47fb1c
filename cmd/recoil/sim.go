package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/recoil-go/recoil/scenarios"
	"github.com/recoil-go/recoil/sim"
)

func init() {
	register(command{"sim", "simulate a scenario on virtual time with the real policies: attempts, peaks, queues, 429s", runSim})
}

const simUsage = `usage: recoil sim [flags] scenario.yaml|name

Runs a scenario — services, clients and the retry policies to compare — as
a discrete-event simulation in which every call drives recoil's real
decision, backoff, budget and breaker code on virtual time. The scenario is
a YAML file, or the name of a built-in one (recoil sim -list); copy a
built-in one out of the repository's scenarios directory to start your own.

Output: a table (or -json) on stdout; -csv writes the time series; -o draws
a chart (SVG, or PNG for a .png name). The same seed gives the same output.

Examples:
  recoil sim gateway-outage
  recoil sim -seed 7 -json blast-radius
  recoil sim -o occ.svg occ-contention
  recoil sim -o queue.png -chart queue -service app blast-radius

Flags:
`

func runSim(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("sim", stderr)
	seed := fs.Uint64("seed", 0, "seed of the random source (0: the scenario's seed, or 1)")
	asJSON := fs.Bool("json", false, "print the results as one JSON object instead of tables")
	csvPath := fs.String("csv", "", "write every service's time series as CSV to `file`")
	chartPath := fs.String("o", "", "draw a chart to `file`: SVG, or PNG if the name ends in .png")
	metric := fs.String("chart", "", "what the chart shows: over time attempts, throttled, succeeded, queue or busy;\nagainst a sweep attempts, per-call, peak, p99, max, goodput or failed (default attempts)")
	service := fs.String("service", "", "the service a time-series chart reads (default: the scenario's target)")
	window := fs.Duration("window", 0, "width of the peak window (default: the scenario's, or 200ms)")
	list := fs.Bool("list", false, "list the built-in scenarios and exit")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), simUsage)
		fs.PrintDefaults()
	}
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if *list {
		for _, n := range builtinScenarios() {
			s, err := loadScenario(n)
			if err != nil {
				return err
			}
			fmt.Fprintf(stdout, "%-16s %s\n", n, s.Description)
		}
		return nil
	}
	switch {
	case len(pos) == 0:
		return fmt.Errorf("%w: name a scenario file or a built-in scenario (%s)", errUsage, strings.Join(builtinScenarios(), ", "))
	case len(pos) > 1:
		return fmt.Errorf("%w: unexpected argument %q", errUsage, pos[1])
	case *window < 0:
		return fmt.Errorf("%w: -window must not be negative", errUsage)
	}
	format := ""
	if *chartPath != "" {
		switch strings.ToLower(filepath.Ext(*chartPath)) {
		case ".svg":
			format = "svg"
		case ".png":
			format = "png"
		default:
			return fmt.Errorf("%w: -o %s: a chart is .svg or .png", errUsage, *chartPath)
		}
	}
	s, err := loadScenario(pos[0])
	if err != nil {
		return err
	}
	bar := newProgress(stderr)
	res, err := sim.Run(ctx, s, sim.Options{Seed: *seed, Window: *window, Progress: bar.update})
	bar.done()
	if err != nil {
		return err
	}
	if *asJSON {
		err = res.WriteJSON(stdout)
	} else {
		err = res.WriteText(stdout)
	}
	if err != nil {
		return err
	}
	if *csvPath != "" {
		if err := writeFile(*csvPath, res.WriteCSV); err != nil {
			return err
		}
	}
	if *chartPath != "" {
		opts := sim.ChartOptions{Format: format, Metric: *metric, Service: *service}
		if err := writeFile(*chartPath, func(w io.Writer) error { return res.WriteChart(w, opts) }); err != nil {
			return err
		}
	}
	return nil
}

// parseInterspersed parses flags that may come before or after the
// scenario's name, and returns the other arguments.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, err
			}
			return nil, fmt.Errorf("%w: %v", errUsage, err)
		}
		if fs.NArg() == 0 {
			return pos, nil
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

// loadScenario reads a scenario file, or a built-in scenario by name.
func loadScenario(arg string) (*sim.Scenario, error) {
	if _, err := os.Stat(arg); err == nil {
		return sim.Load(arg)
	}
	name := strings.TrimSuffix(arg, ".yaml") + ".yaml"
	data, err := scenarios.FS.ReadFile(name)
	if err != nil {
		return nil, fmt.Errorf("no scenario file or built-in scenario %q (built-in: %s)", arg, strings.Join(builtinScenarios(), ", "))
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

// writeFile writes a file through write, reporting the first error.
func writeFile(path string, write func(io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Close()
		return fmt.Errorf("%s: %w", path, err)
	}
	return f.Close()
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
