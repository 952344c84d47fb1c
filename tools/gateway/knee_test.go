package gateway

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// TestKnee: past Latency.Knee attempts in flight, each attempt waits its
// latency times in-flight / Knee, so throughput stops growing at the knee.
func TestKnee(t *testing.T) {
	const ms = time.Millisecond
	tests := []struct {
		name string
		knee int
		n    int
		want []time.Duration // when attempt i, arriving i-th with i+1 in flight, is answered
		// /metrics's knee gauges with the n attempts in flight
		metrics []string
	}{
		{"no knee", 0, 6, []time.Duration{100 * ms, 100 * ms, 100 * ms, 100 * ms, 100 * ms, 100 * ms},
			[]string{"recoil_gateway_knee 0", "recoil_gateway_latency_stretch 1", "recoil_gateway_in_flight 6"}},
		{"under the knee", 8, 6, []time.Duration{100 * ms, 100 * ms, 100 * ms, 100 * ms, 100 * ms, 100 * ms},
			[]string{"recoil_gateway_knee 8", "recoil_gateway_latency_stretch 1", "recoil_gateway_peak_in_flight 6"}},
		{"past a knee of 4", 4, 6, []time.Duration{100 * ms, 100 * ms, 100 * ms, 100 * ms, 125 * ms, 150 * ms},
			[]string{"recoil_gateway_knee 4", "recoil_gateway_latency_stretch 1.5", "recoil_gateway_peak_in_flight 6"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				g := mustNew(t, Config{Latency: Latency{Mean: 100 * ms, Knee: tt.knee}})
				defer g.Close()
				start := time.Now()
				got := make([]time.Duration, tt.n)
				var wg sync.WaitGroup
				for i := range tt.n {
					wg.Go(func() {
						rec := httptest.NewRecorder()
						g.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/v1/messages", nil))
						got[i] = time.Since(start)
					})
					synctest.Wait() // in flight before the next arrives
				}
				if s := g.Stats(); s.InFlight != int64(tt.n) || s.PeakInFlight != int64(tt.n) {
					t.Errorf("in flight %d, peak %d; want %d", s.InFlight, s.PeakInFlight, tt.n)
				}
				rec := httptest.NewRecorder()
				g.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
				for _, want := range tt.metrics {
					if !strings.Contains(rec.Body.String(), want+"\n") {
						t.Errorf("/metrics lacks %q:\n%s", want, rec.Body)
					}
				}
				wg.Wait()
				for i, d := range got {
					if d != tt.want[i] {
						t.Errorf("attempt %d answered at %v, want %v", i, d, tt.want[i])
					}
				}
				if s := g.Stats(); s.InFlight != 0 || s.PeakInFlight != int64(tt.n) {
					t.Errorf("after: in flight %d, peak %d; want 0, %d", s.InFlight, s.PeakInFlight, tt.n)
				}
			})
		})
	}
}
