package recoilotel_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/recoil-go/recoil"
	"github.com/recoil-go/recoil/internal/metricdef"
	"github.com/recoil-go/recoil/internal/metricdef/metrictest"
	"github.com/recoil-go/recoil/recoilotel"
)

// promName is the name OpenTelemetry's Prometheus exporter gives an
// instrument (the specification's "Prometheus and OpenMetrics
// Compatibility": dots to underscores, a unit suffix for seconds, _total
// for a monotonic sum; annotations in braces are dropped).
func promName(m metricdata.Metrics) string {
	n := strings.ReplaceAll(m.Name, ".", "_")
	if m.Unit == "s" {
		n += "_seconds"
	}
	return n
}

// collect reads r into one value per series, keyed as the Prometheus
// adapter's are: attribute recoil.x becomes label x.
func collect(t *testing.T, r sdkmetric.Reader) map[string]float64 {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := r.Collect(context.Background(), &rm); err != nil {
		t.Fatalf("Collect: %v", err)
	}
	got := map[string]float64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			name := promName(m)
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				for _, p := range d.DataPoints {
					got[metrictest.Key(name+"_total", labels(p.Attributes.ToSlice()))] = float64(p.Value)
				}
			case metricdata.Gauge[int64]:
				for _, p := range d.DataPoints {
					got[metrictest.Key(name, labels(p.Attributes.ToSlice()))] = float64(p.Value)
				}
			case metricdata.Gauge[float64]:
				for _, p := range d.DataPoints {
					got[metrictest.Key(name, labels(p.Attributes.ToSlice()))] = p.Value
				}
			case metricdata.Histogram[int64]:
				for _, p := range d.DataPoints {
					l := labels(p.Attributes.ToSlice())
					got[metrictest.Key(name+"_count", l)] = float64(p.Count)
					got[metrictest.Key(name+"_sum", l)] = float64(p.Sum)
				}
			case metricdata.Histogram[float64]:
				for _, p := range d.DataPoints {
					l := labels(p.Attributes.ToSlice())
					got[metrictest.Key(name+"_count", l)] = float64(p.Count)
					got[metrictest.Key(name+"_sum", l)] = p.Sum
				}
			default:
				t.Errorf("%s: unexpected data %T", m.Name, m.Data)
			}
		}
	}
	return got
}

func TestScripts(t *testing.T) {
	metrictest.Run(t, func(t *testing.T) (metrictest.Observer, func(*testing.T) map[string]float64) {
		r := sdkmetric.NewManualReader()
		m, err := recoilotel.NewMetrics(recoilotel.WithMeterProvider(sdkmetric.NewMeterProvider(sdkmetric.WithReader(r))))
		if err != nil {
			t.Fatal(err)
		}
		o, err := m.Policy(metrictest.Policy)
		if err != nil {
			t.Fatal(err)
		}
		return o, func(t *testing.T) map[string]float64 { return collect(t, r) }
	})
}

// TestFleet holds Fleet to the script both adapters share: the callback
// reads the counts at each collection, under the same names and labels.
func TestFleet(t *testing.T) {
	metrictest.RunFleet(t, func(t *testing.T) (metrictest.FleetAdder, func(*testing.T) map[string]float64) {
		r := sdkmetric.NewManualReader()
		m, err := recoilotel.NewMetrics(recoilotel.WithMeterProvider(sdkmetric.NewMeterProvider(sdkmetric.WithReader(r))))
		if err != nil {
			t.Fatal(err)
		}
		add := func(name string, c metricdef.FleetCounter) error { return m.Fleet(name, c) }
		return add, func(t *testing.T) map[string]float64 { return collect(t, r) }
	})
}

func TestPolicyName(t *testing.T) {
	m, err := recoilotel.NewMetrics()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		ok   bool
	}{
		{"models", true},
		{"", false},
		{"https://api.example.com/v1?key=k", false},
	}
	for _, tt := range tests {
		if _, err := m.Policy(tt.name); (err == nil) != tt.ok {
			t.Errorf("Policy(%q) error = %v, want ok %v", tt.name, err, tt.ok)
		}
	}
}

func labels(attrs []attribute.KeyValue) map[string]string {
	l := make(map[string]string, len(attrs))
	for _, a := range attrs {
		l[strings.TrimPrefix(string(a.Key), "recoil.")] = a.Value.String()
	}
	return l
}

// TestObserveAllocs holds Observe to no allocation, with the SDK's meter
// provider, on every path, a Fallback's and a Hedge's included, once a
// target has been met.
func TestObserveAllocs(t *testing.T) {
	m, err := recoilotel.NewMetrics(recoilotel.WithMeterProvider(sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))))
	if err != nil {
		t.Fatal(err)
	}
	o, err := m.Policy(metrictest.Policy)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for name, s := range map[string]recoil.Summary{
		"plain": {Attempts: 2, Waited: time.Second},
		"fallback": {Attempts: 2, Targets: []recoil.TargetReport{
			{Target: "primary", Attempts: 1, Left: "overloaded"},
			{Target: "cold", Left: "cooling down, then circuit open"},
			{Target: "secondary", Attempts: 1},
		}},
		"hedged": {Attempts: 3, Hedges: 2, RefusedHedges: 1, Wasted: 2},
	} {
		o.Observe(ctx, s) // meets the targets
		if n := testing.AllocsPerRun(100, func() { o.Observe(ctx, s) }); n != 0 {
			t.Errorf("Observe(%s) allocates %v times, want 0", name, n)
		}
	}
}

// TestFallbackAttributes checks the attributes the fallback counter's
// points carry: recoil.policy, recoil.target and recoil.why, the last
// bounded.
func TestFallbackAttributes(t *testing.T) {
	r := sdkmetric.NewManualReader()
	m, err := recoilotel.NewMetrics(recoilotel.WithMeterProvider(sdkmetric.NewMeterProvider(sdkmetric.WithReader(r))))
	if err != nil {
		t.Fatal(err)
	}
	o, err := m.Policy(metrictest.Policy)
	if err != nil {
		t.Fatal(err)
	}
	o.Observe(context.Background(), recoil.Summary{Attempts: 2, Targets: []recoil.TargetReport{
		{Target: "primary", Attempts: 1, Left: "sk-live-1234 was refused by tenant 42"},
		{Target: "secondary", Attempts: 1},
	}})
	var rm metricdata.ResourceMetrics
	if err := r.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, sm := range rm.ScopeMetrics {
		for _, mt := range sm.Metrics {
			if mt.Name != metricdef.Fallbacks.OTel {
				continue
			}
			for _, p := range mt.Data.(metricdata.Sum[int64]).DataPoints {
				for _, kv := range p.Attributes.ToSlice() {
					got = append(got, string(kv.Key)+"="+kv.Value.String())
				}
			}
		}
	}
	want := []string{"recoil.policy=" + metrictest.Policy, "recoil.target=primary", "recoil.why=other"}
	if !slices.Equal(got, want) {
		t.Errorf("attributes %v, want %v", got, want)
	}
}
