package recoilotel_test

import (
	"context"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

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
