package openloop

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

func TestRun(t *testing.T) {
	for _, tc := range []struct {
		name      string
		status    int
		ok        int
		sustained bool
	}{
		{"answered", http.StatusOK, 20, true},
		{"refused", http.StatusServiceUnavailable, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/json" {
					w.WriteHeader(http.StatusBadRequest)
					return
				}
				w.WriteHeader(tc.status)
			}))
			defer srv.Close()
			r := Run(context.Background(), Client(), srv.URL, `{}`, 200, 100*time.Millisecond)
			if r.Calls != 20 || r.OK != tc.ok {
				t.Errorf("calls %d, ok %d; want 20, %d", r.Calls, r.OK, tc.ok)
			}
			if got := r.Sustained(time.Minute); got != tc.sustained {
				t.Errorf("Sustained = %v, want %v", got, tc.sustained)
			}
			if tc.ok > 0 && (r.P50 <= 0 || r.P99 < r.P50) {
				t.Errorf("p50 %v, p99 %v", r.P50, r.P99)
			}
		})
	}
}

func TestHighestStopsAtTheFirstRateNotSustained(t *testing.T) {
	// The server refuses once it has answered 30 calls: the ladder's
	// first rate (20 calls) is sustained, its second (40) is not, and
	// the third is never run.
	n := 0
	srv := httptest.NewServer(serial(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n++ // calls of one run may overlap: serial runs them one at a time
		if n > 30 {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	})))
	defer srv.Close()
	best, runs := Highest(context.Background(), Client(), srv.URL, `{}`, []float64{200, 400, 800}, 100*time.Millisecond, time.Minute)
	if best != 200 || len(runs) != 2 {
		t.Errorf("best %v after %d runs; want 200 after 2", best, len(runs))
	}
}

// serial runs h for one request at a time.
func serial(h http.Handler) http.Handler {
	sem := make(chan struct{}, 1)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sem <- struct{}{}
		defer func() { <-sem }()
		h.ServeHTTP(w, r)
	})
}
