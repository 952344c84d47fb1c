package simchart

import (
	"bytes"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/recoil-go/recoil/tools/cmd/recoil/internal/chart"
	"github.com/recoil-go/recoil/tools/scenarios"
	"github.com/recoil-go/recoil/tools/sim"
)

// series returns samples of one window each from 0 to end, with arrivals
// per window, and the queue as a level.
func series(end, window time.Duration, arrivals int64) []sim.Sample {
	var out []sim.Sample
	for t := window; t <= end; t += window {
		out = append(out, sim.Sample{T: t, Dt: window, Arrivals: arrivals, Throttled: arrivals / 2, Succeeded: arrivals / 4, Queue: 3, Busy: 5})
	}
	return out
}

// sweepResult is a result shaped like occ-contention's: clients contending
// for a record, swept from 10 to 190.
func sweepResult() *sim.Result {
	r := &sim.Result{Scenario: "occ-contention", Window: 200 * time.Millisecond, Target: "record", SweepPath: "clients[writers].callers"}
	for n := 10; n <= 190; n += 20 {
		for i, p := range []string{"no backoff", "exponential", "full jitter"} {
			r.Runs = append(r.Runs, sim.RunResult{
				Policy: p, SweepValue: strconv.Itoa(n), Calls: int64(n), Succeeded: int64(n),
				Attempts: int64(n * n / (i + 1)), Peak: int64(n), Goodput: 20, Latency: sim.Percentiles{P99: time.Second, Max: 2 * time.Second},
				Services: []sim.ServiceResult{{Name: "record", Writes: int64(n), Series: series(2*time.Second, 200*time.Millisecond, int64(n))}},
			})
		}
	}
	return r
}

// timeResult is a result shaped like gateway-outage's: values callers
// swept, three policies, the gateway down for the first 700 ms.
func timeResult(values ...string) *sim.Result {
	r := &sim.Result{Scenario: "gateway-outage", Window: 200 * time.Millisecond, Target: "gateway", SweepPath: "clients[callers].callers"}
	for _, v := range values {
		n, _ := strconv.ParseInt(v, 10, 64)
		for i, p := range []string{"immediate 20ms", "exp+full jitter 60ms", "recoil default"} {
			r.Runs = append(r.Runs, sim.RunResult{
				Policy: p, SweepValue: v, Calls: n, Succeeded: n,
				Services: []sim.ServiceResult{{
					Name: "gateway", Series: series(time.Duration(i+1)*time.Second, 200*time.Millisecond, 6*n/int64(i+1)),
					Outages: []sim.OutageResult{{End: 700 * time.Millisecond, Recovered: true, RecoveredAt: 700 * time.Millisecond}},
				}},
			})
		}
	}
	return r
}

// figures returns the charts drawn from synthetic results, by name.
func figures(t *testing.T) map[string]*chart.Figure {
	t.Helper()
	tests := []struct {
		name string
		r    *sim.Result
		o    Options
	}{
		{"sweep attempts", sweepResult(), Options{}},
		{"sweep per-call", sweepResult(), Options{Metric: PerCall}},
		{"sweep peak", sweepResult(), Options{Metric: Peak}},
		{"sweep p99", sweepResult(), Options{Metric: P99}},
		{"sweep goodput", sweepResult(), Options{Metric: Goodput}},
		{"sweep over time", sweepResult(), Options{OverTime: true}},
		{"two panels", timeResult("4", "1000"), Options{}},
		{"one panel", timeResult("4"), Options{Metric: Throttled}},
		{"four panels", timeResult("4", "40", "400", "4000"), Options{Metric: Queue}},
		{"busy", timeResult("4", "1000"), Options{Metric: Busy}},
	}
	figs := map[string]*chart.Figure{}
	for _, tt := range tests {
		f, err := figure(tt.r, tt.o)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		figs[tt.name] = f
	}
	return figs
}

// pathLike matches a field path: "clients[writers].callers", "a.b".
var pathLike = regexp.MustCompile(`\[|[a-z_\]]\.[a-z]`)

// TestChartTitlesInWords: no title, panel title or axis title of any chart
// is a field path.
func TestChartTitlesInWords(t *testing.T) {
	for name, f := range figures(t) {
		texts := []string{f.Title}
		for _, p := range f.Panels {
			texts = append(texts, p.Title.Text, p.X.Label.Text, p.Y.Label.Text)
		}
		for _, s := range texts {
			if pathLike.MatchString(s) {
				t.Errorf("%s: title %q reads like a field path", name, s)
			}
		}
		if f.Panels[0].Y.Label.Text == "" || f.Panels[0].X.Label.Text == "" {
			t.Errorf("%s: axes untitled", name)
		}
	}
}

func TestDescribeSweep(t *testing.T) {
	tests := []struct {
		path       string
		contention bool
		want       string
		scale      float64
	}{
		{"clients[writers].callers", true, "contending clients", 1},
		{"clients[callers].callers", false, "callers", 1},
		{"clients[writers].callers", false, "callers (writers)", 1},
		{"services[app].workers", false, "workers at app", 1},
		{"services[backend].failure", false, "failure rate at backend (%)", 100},
		{"services[db].outages[0].failure", false, "outage failure rate at db (%)", 100},
		{"services[1].queue", false, "queue limit at service 1", 1},
		{"clients[mobile].rate", false, "arrivals per second (mobile)", 1},
		{"policies[retry].attempts", false, "attempts allowed per call (retry)", 1},
		{"policies[retry].backoff.multiplier", false, "backoff multiplier (retry)", 1},
		{"policies[retry].budget.percent", false, "retry budget (% of requests) (retry)", 1},
		{"policies[retry].breaker.failure_rate", false, "failure rate that opens the breaker (retry) (%)", 100},
		{"policies[retry].backoff.base_ms", false, "backoff base ms (retry)", 1},
		{"seed", false, "seed", 1},
	}
	for _, tt := range tests {
		a := describeSweep(tt.path, tt.contention)
		if a.title != tt.want || a.scale != tt.scale {
			t.Errorf("describeSweep(%q) = %q ×%v, want %q ×%v", tt.path, a.title, a.scale, tt.want, tt.scale)
		}
		if pathLike.MatchString(a.title) {
			t.Errorf("describeSweep(%q) = %q: reads like a path", tt.path, a.title)
		}
	}
}

// TestChartLegendOutsideData: in every chart the legend lies below the
// data areas, apart from all of them, and inside the figure.
func TestChartLegendOutsideData(t *testing.T) {
	for name, f := range figures(t) {
		l := f.Layout()
		if len(f.Legend) == 0 {
			t.Errorf("%s: no legend", name)
		}
		for i, d := range l.Data {
			if l.Legend.Max.Y > d.Min.Y {
				t.Errorf("%s: legend %v reaches into panel %d's data area %v", name, l.Legend, i, d)
			}
		}
		if l.Legend.Min.X < 0 || l.Legend.Max.X > l.Size.X || l.Legend.Min.Y < 0 {
			t.Errorf("%s: legend %v outside the figure %v", name, l.Legend, l.Size)
		}
	}
}

// TestChartSVG writes every chart as SVG: text in the font stack, no tick
// printed with decimals the range does not need.
func TestChartSVG(t *testing.T) {
	decimalTick := regexp.MustCompile(`>[0-9,]+\.0+<`)
	for name, f := range figures(t) {
		var b bytes.Buffer
		if err := f.WriteTo(&b, "svg"); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		s := b.String()
		if n, all := strings.Count(s, "font-family:"+chart.FontStack), strings.Count(s, "font-family:"); n == 0 || n != all {
			t.Errorf("%s: %d of %d font-family declarations name the stack %q", name, n, all, chart.FontStack)
		}
		if m := decimalTick.FindString(s); m != "" {
			t.Errorf("%s: a whole number printed with decimals: %s", name, m)
		}
	}
}

func TestChartOutageShaded(t *testing.T) {
	f, err := figure(timeResult("4", "1000"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	last := f.Legend[len(f.Legend)-1]
	if want := "outage at gateway, the first 700 ms"; last.Label != want {
		t.Errorf("last legend entry %q, want %q", last.Label, want)
	}
	if _, ok := last.Thumbs[0].(chart.Band); !ok {
		t.Errorf("outage legend entry drawn with %T, want a chart.Band", last.Thumbs[0])
	}
	if got, want := len(f.Panels), 2; got != want {
		t.Errorf("%d panels, want one per sweep value, %d", got, want)
	}
	if got := f.Panels[1].Title.Text; got != "callers: 1,000" {
		t.Errorf("second panel titled %q, want %q", got, "callers: 1,000")
	}
}

// TestBinSeries: counts come out per window, whatever the samples' width;
// levels come out as means.
// TestOutageBandsOfTheService: a chart of a service with outages of its
// own shades those alone, each kind in its own words, bands side by side
// in shades apart; a chart of a service with none (a layer above the one
// that fails) shades every service's.
func TestOutageBandsOfTheService(t *testing.T) {
	m := time.Minute
	run := &sim.RunResult{Services: []sim.ServiceResult{
		{Name: "primary", Outages: []sim.OutageResult{
			{Start: 2 * m, End: 5 * m, Class: "overloaded"},
			{Start: 5 * m, End: 8 * m, Class: "not-found"},
			{Start: 8 * m, End: 12 * m, Class: "quota"},
			{Start: 14 * m, End: 15 * m},
		}},
		{Name: "second", Outages: []sim.OutageResult{{Start: 10 * m, End: 11 * m, Class: "unauthorized"}}},
		{Name: "app"},
	}}
	bands := outageBands(run, "primary", time.Minute)
	var got []string
	for _, b := range bands {
		got = append(got, fmt.Sprintf("%s|%s|%v", b.Label, b.Short, b.Color))
	}
	want := []string{
		"primary overloaded (503, 529)|overloaded|<nil>",
		"primary answers 404 model_not_found|404 retired model|{196}",
		"primary answers 429 insufficient_quota|429 quota spent|{236}",
		"outage at primary||<nil>",
	}
	if !slices.Equal(got, want) {
		t.Errorf("bands of primary =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if bands := outageBands(run, "app", time.Minute); len(bands) != 5 || bands[4].Label != "second answers 401 invalid_api_key" {
		t.Errorf("a service without outages shades %d bands, the last %q; want every service's 5", len(bands), bands[len(bands)-1].Label)
	}
}

func TestBinSeries(t *testing.T) {
	const w = 200 * time.Millisecond
	decimated := []sim.Sample{{T: 400 * time.Millisecond, Dt: 400 * time.Millisecond, Arrivals: 20, Queue: 2}, {T: 800 * time.Millisecond, Dt: 400 * time.Millisecond, Arrivals: 40, Queue: 4}}
	tests := []struct {
		name    string
		samples []sim.Sample
		metric  string
		bin     time.Duration
		want    []float64
	}{
		{"one window each", series(time.Second, w, 7), Attempts, w, []float64{7, 7, 7, 7, 7}},
		{"two windows a sample", decimated, Attempts, 2 * w, []float64{10, 20}},
		{"a step of two samples", decimated, Attempts, 4 * w, []float64{15}},
		{"levels averaged", decimated, Queue, 4 * w, []float64{3}},
		{"429s", series(time.Second, w, 8), Throttled, 5 * w, []float64{4}},
	}
	for _, tt := range tests {
		var got []float64
		for _, b := range binSeries(tt.samples, tt.metric, tt.bin, w, time.Second) {
			got = append(got, b.Y)
		}
		if fmt.Sprint(got) != fmt.Sprint(tt.want) {
			t.Errorf("%s: binSeries = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestBinWidth(t *testing.T) {
	const w = 200 * time.Millisecond
	tests := []struct {
		end, want time.Duration
	}{
		{4 * time.Second, w},
		{20 * time.Second, w},
		{21 * time.Second, 2 * w},
		{6 * time.Minute, 4 * time.Second},
		{10 * time.Minute, 10 * time.Second},
	}
	for _, tt := range tests {
		if got := binWidth(tt.end, w); got != tt.want {
			t.Errorf("binWidth(%v, %v) = %v, want %v", tt.end, w, got, tt.want)
		}
	}
}

// TestChartShippedScenario draws a cheap shipped scenario end to end.
func TestChartShippedScenario(t *testing.T) {
	t.Parallel()
	data, err := scenarios.FS.ReadFile("gateway-outage.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s, err := sim.Parse("gateway-outage.yaml", data)
	if err != nil {
		t.Fatal(err)
	}
	s.Sweep.Values = []string{"4", "40"}
	r, err := sim.Run(t.Context(), s, sim.Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, format := range []string{"svg", "png"} {
		var b bytes.Buffer
		if err := Write(&b, r, Options{Format: format}); err != nil {
			t.Fatalf("%s: %v", format, err)
		}
		if b.Len() < 1000 {
			t.Errorf("%s: %d bytes", format, b.Len())
		}
	}
	if err := Write(&bytes.Buffer{}, r, Options{Format: "gif"}); err == nil {
		t.Error("format gif: nil error")
	}
	if err := Write(&bytes.Buffer{}, r, Options{Metric: P99, OverTime: true}); err == nil {
		t.Error("p99 over time: nil error")
	}
	if err := Write(&bytes.Buffer{}, r, Options{Service: "nope"}); err == nil {
		t.Error("unknown service: nil error")
	}
}
