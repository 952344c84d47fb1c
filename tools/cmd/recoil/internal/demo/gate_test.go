package demo

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"testing/synctest"
	"time"
)

// answerNow is a transport that answers every request at once.
type answerNow struct{}

func (answerNow) RoundTrip(*http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: http.StatusServiceUnavailable, Body: http.NoBody}, nil
}

// A calibration run ends span after its gate opens, but not before the
// gate has sent enough attempts to measure a pace from: on a machine so
// busy that a lone caller's round trip outlasts span, it goes on until
// it has (a CI run at load 25 once ended after one attempt, failing the
// demo with "the calibration run sent fewer than two attempts").
func TestEndAfterOpenWaitsForEnoughAttempts(t *testing.T) {
	tests := []struct {
		name    string
		gap     time.Duration // between the lone caller's attempts
		endedAt time.Duration // from the gate opening
	}{
		{"fast machine: ends at span", 20 * time.Millisecond, 500 * time.Millisecond},
		{"busy machine: ends at the third attempt", 700 * time.Millisecond, 1400 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				gate := newStartGate(answerNow{}, 1)
				ctx, cancel := context.WithCancelCause(t.Context())
				defer cancel(nil)
				ended := endAfterOpen(ctx, cancel, gate, 500*time.Millisecond)
				start := time.Now()
				go func() {
					for ctx.Err() == nil {
						req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://gateway.invalid/", nil)
						if _, err := gate.RoundTrip(req); err != nil {
							return
						}
						select {
						case <-time.After(tt.gap):
						case <-ctx.Done():
						}
					}
				}()
				<-ctx.Done()
				if got := time.Since(start); got != tt.endedAt {
					t.Errorf("ended %v after the gate opened, want %v", got, tt.endedAt)
				}
				if cause := context.Cause(ctx); !errors.Is(cause, errCounted) {
					t.Errorf("cause %v, want errCounted", cause)
				}
				<-ended
				if gate.pace() != tt.gap {
					t.Errorf("pace %v, want %v", gate.pace(), tt.gap)
				}
				synctest.Wait()
			})
		})
	}
}
