package recoilprom_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"

	"github.com/recoil-go/recoil"
	"github.com/recoil-go/recoil/breaker"
	"github.com/recoil-go/recoil/internal/metricdef"
	"github.com/recoil-go/recoil/internal/metricdef/metrictest"
	"github.com/recoil-go/recoil/recoilprom"
)

// scrape gathers reg into one value per series, histograms as their _count
// and _sum.
func scrape(t *testing.T, reg *prometheus.Registry) map[string]float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatalf("Gather: %v", err)
	}
	got := map[string]float64{}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			name := f.GetName()
			switch f.GetType() {
			case dto.MetricType_COUNTER:
				got[metrictest.Key(name, labels)] = m.GetCounter().GetValue()
			case dto.MetricType_GAUGE:
				got[metrictest.Key(name, labels)] = m.GetGauge().GetValue()
			case dto.MetricType_HISTOGRAM:
				got[metrictest.Key(name+"_count", labels)] = float64(m.GetHistogram().GetSampleCount())
				got[metrictest.Key(name+"_sum", labels)] = m.GetHistogram().GetSampleSum()
			default:
				t.Errorf("%s: unexpected type %v", name, f.GetType())
			}
		}
	}
	return got
}

// observed returns a registry holding fresh Metrics, and the Observer of
// metrictest.Policy.
func observed(t *testing.T) (*recoilprom.Metrics, *prometheus.Registry, *recoilprom.Observer) {
	t.Helper()
	m := recoilprom.NewMetrics()
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(m)
	o, err := m.Policy(metrictest.Policy)
	if err != nil {
		t.Fatal(err)
	}
	return m, reg, o
}

func TestScripts(t *testing.T) {
	metrictest.Run(t, func(t *testing.T) (metrictest.Observer, func(*testing.T) map[string]float64) {
		_, reg, o := observed(t)
		return o, func(t *testing.T) map[string]float64 { return scrape(t, reg) }
	})
}

// TestFleet holds Fleet to the script both adapters share: the counts are
// read at each scrape, under the same names and labels.
func TestFleet(t *testing.T) {
	metrictest.RunFleet(t, func(t *testing.T) (metrictest.FleetAdder, func(*testing.T) map[string]float64) {
		m := recoilprom.NewMetrics()
		reg := prometheus.NewPedanticRegistry()
		reg.MustRegister(m)
		add := func(name string, c metricdef.FleetCounter) error { return m.Fleet(name, c) }
		return add, func(t *testing.T) map[string]float64 { return scrape(t, reg) }
	})
}

// TestLint runs client_golang's metric linter, the one promtool check
// metrics runs, over a scrape with every series present.
func TestLint(t *testing.T) {
	m, _, o := observed(t)
	o.BreakerHook()
	o.Limiter(nil)
	o.Instrument(&recoil.Policy{Fallback: &recoil.Fallback{Targets: []recoil.Target{{Name: "primary"}}}})
	if err := m.Fleet("main", &metrictest.FakeFleet{}); err != nil {
		t.Fatal(err)
	}
	problems, err := testutil.CollectAndLint(m)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("lint: %s: %s", p.Metric, p.Text)
	}
	if n := testutil.CollectAndCount(m); n < 30 {
		t.Errorf("CollectAndCount = %d series, want at least 30", n)
	}
}

func TestPolicyName(t *testing.T) {
	m := recoilprom.NewMetrics()
	tests := []struct {
		name string
		ok   bool
	}{
		{"payments", true},
		{"model-api.v1_eu", true},
		{strings.Repeat("a", 64), true},
		{"", false},
		{strings.Repeat("a", 65), false},
		{"https://api.example.com/v1", false},
		{"sk-live key", false},
		{"naïve", false},
	}
	for _, tt := range tests {
		_, err := m.Policy(tt.name)
		if (err == nil) != tt.ok {
			t.Errorf("Policy(%q) error = %v, want ok %v", tt.name, err, tt.ok)
		}
	}
}

// TestPromtool runs promtool check metrics over a scrape with every series
// present, when promtool is installed (Debian's prometheus package has it).
func TestPromtool(t *testing.T) {
	path, err := exec.LookPath("promtool")
	if err != nil {
		t.Skip("promtool is not installed; TestLint runs the same linter")
	}
	m, reg, o := observed(t)
	o.BreakerHook()
	o.Limiter(nil)
	o.Instrument(&recoil.Policy{Fallback: &recoil.Fallback{Targets: []recoil.Target{{Name: "primary"}}}})
	if err := m.Fleet("main", &metrictest.FakeFleet{}); err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	promhttp.HandlerFor(reg, promhttp.HandlerOpts{}).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, "check", "metrics")
	cmd.Stdin = rec.Body
	if out, err := cmd.CombinedOutput(); err != nil || len(bytes.TrimSpace(out)) > 0 {
		t.Errorf("promtool check metrics: %v\n%s", err, out)
	}
}

// summaries are a call's Summary on each path the observer records: no
// Fallback or Hedge, a Fallback's moves, and a Hedge's counts.
var summaries = map[string]recoil.Summary{
	"plain": {Attempts: 2, Reason: recoil.ReasonNone, Waited: time.Second},
	"fallback": {Attempts: 2, Targets: []recoil.TargetReport{
		{Target: "primary", Attempts: 1, Left: "overloaded"},
		{Target: "cold", Left: "cooling down, then circuit open"},
		{Target: "secondary", Attempts: 1},
	}},
	"hedged": {Attempts: 3, Hedges: 2, RefusedHedges: 1, Wasted: 2},
}

// TestObserveAllocs holds Observe to no allocation on every path, a
// Fallback's and a Hedge's included, once a target has been met.
func TestObserveAllocs(t *testing.T) {
	_, _, o := observed(t)
	ctx := context.Background()
	for name, s := range summaries {
		o.Observe(ctx, s) // meets the targets
		if n := testing.AllocsPerRun(100, func() { o.Observe(ctx, s) }); n != 0 {
			t.Errorf("Observe(%s) allocates %v times, want 0", name, n)
		}
	}
}

// TestFallbackSeries checks what only the Prometheus adapter does: the
// hedge series and the series of a Fallback's named targets exist at zero
// once the policy is instrumented, and Observers of one policy share the
// bound on its targets.
func TestFallbackSeries(t *testing.T) {
	m, reg, o := observed(t)
	o.Instrument(&recoil.Policy{Fallback: &recoil.Fallback{Targets: []recoil.Target{{Name: "primary"}, {}, {Name: "secondary"}}}})
	got := scrape(t, reg)
	for _, key := range []string{
		metrictest.Key(metricdef.Hedges.Prom, map[string]string{"policy": metrictest.Policy}),
		metrictest.Key(metricdef.HedgeRefusals.Prom, map[string]string{"policy": metrictest.Policy}),
		metrictest.Key(metricdef.WastedAttempts.Prom, map[string]string{"policy": metrictest.Policy}),
		metrictest.Key(metricdef.TargetAttempts.Prom, map[string]string{"policy": metrictest.Policy, "target": "primary"}),
		metrictest.Key(metricdef.TargetAttempts.Prom, map[string]string{"policy": metrictest.Policy, "target": "secondary"}),
		metrictest.Key(metricdef.Fallbacks.Prom, map[string]string{"policy": metrictest.Policy, "target": "primary", "why": "overloaded"}),
		metrictest.Key(metricdef.Fallbacks.Prom, map[string]string{"policy": metrictest.Policy, "target": "secondary", "why": metricdef.WhyOther}),
	} {
		if v, ok := got[key]; !ok || v != 0 {
			t.Errorf("%s = %v (present %v), want 0", key, v, ok)
		}
	}
	// The unnamed target is met when a call reports it.
	if _, ok := got[metrictest.Key(metricdef.TargetAttempts.Prom, map[string]string{"policy": metrictest.Policy, "target": "target 2"})]; ok {
		t.Error("an unnamed target's series exists before a call reports it")
	}

	// A second Observer of the policy, meeting more targets, shares the
	// first one's bound: 2 named above, 14 more, then other.
	o2, err := m.Policy(metrictest.Policy)
	if err != nil {
		t.Fatal(err)
	}
	var reports []recoil.TargetReport
	for i := range 20 {
		reports = append(reports, recoil.TargetReport{Target: fmt.Sprintf("extra-%02d", i), Attempts: 1, Left: "overloaded"})
	}
	o2.Observe(context.Background(), recoil.Summary{Attempts: 20, Targets: reports})
	targets := map[string]float64{}
	for key, v := range scrape(t, reg) {
		if strings.HasPrefix(key, metricdef.TargetAttempts.Prom+"{") {
			targets[key] = v
		}
	}
	if len(targets) != metricdef.MaxTargets+1 {
		t.Errorf("%d target series, want %d: %v", len(targets), metricdef.MaxTargets+1, targets)
	}
	other := metrictest.Key(metricdef.TargetAttempts.Prom, map[string]string{"policy": metrictest.Policy, "target": metricdef.TargetOther})
	if got, want := targets[other], float64(20-(metricdef.MaxTargets-2)); got != want {
		t.Errorf("%s = %v, want %v", other, got, want)
	}
}

// TestBreakerAllocs holds the wrapped breaker to no allocation per call:
// admitting, recording an outcome with its latency, and a slow report.
func TestBreakerAllocs(t *testing.T) {
	_, _, o := observed(t)
	b := o.Breaker(breaker.Must(breaker.New(breaker.Settings{SlowCallRate: 0.99, SlowCallThreshold: time.Millisecond, MinRequests: 1 << 20})))
	now := time.Now()
	n := testing.AllocsPerRun(100, func() {
		if b.AllowAt(now) {
			b.RecordLatencyAt(now, breaker.Success, time.Second)
		}
		b.RecordSlowAt(now)
	})
	if n != 0 {
		t.Errorf("the wrapped breaker allocates %v times per call, want 0", n)
	}
	var p recoil.Policy
	p.Breaker = breaker.Must(breaker.New(breaker.Settings{}))
	o.Instrument(&p)
	if _, ok := p.Breaker.(recoil.LatencyBreaker); !ok {
		t.Errorf("Instrument's breaker is %T, not a recoil.LatencyBreaker", p.Breaker)
	}
}
