package gateway

import (
	"net/http"
	"net/http/httptest"
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
	}{
		{"no knee", 0, 6, []time.Duration{100 * ms, 100 * ms, 100 * ms, 100 * ms, 100 * ms, 100 * ms}},
		{"under the knee", 8, 6, []time.Duration{100 * ms, 100 * ms, 100 * ms, 100 * ms, 100 * ms, 100 * ms}},
		{"past a knee of 4", 4, 6, []time.Duration{100 * ms, 100 * ms, 100 * ms, 100 * ms, 125 * ms, 150 * ms}},
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
