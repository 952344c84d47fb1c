package recoilprom_test

import (
	"testing"

	"github.com/recoil-go/recoil"
	"github.com/recoil-go/recoil/internal/metricdef/metrictest"
	"github.com/recoil-go/recoil/recoilprom"
)

// BenchmarkOverhead compares Do with the Prometheus adapter attached to Do
// with no hooks and with empty hooks, in one run.
func BenchmarkOverhead(b *testing.B) {
	obs, err := recoilprom.NewMetrics().Policy("bench")
	if err != nil {
		b.Fatal(err)
	}
	metrictest.Bench(b, map[string]func(*recoil.Policy){
		"0-none":  nil,
		"1-hooks": metrictest.EmptyHooks,
		"2-prom":  obs.Instrument,
	})
}
