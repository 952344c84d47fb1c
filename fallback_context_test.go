package recoil_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/recoil-go/recoil"
)

// TestFallbackContextMovesOnToLongerContexts: a prompt too long for a
// target's context moves the call to the next target declaring a longer
// one, and on again when that one is too short too — 8k, then 32k, then
// 128k — passing over a target whose context is no longer than the one
// that refused; with no longer target left, the call stops. Every move
// counts against MaxAttempts, as every move does.
func TestFallbackContextMovesOnToLongerContexts(t *testing.T) {
	tooLong := func(name string) error {
		v := recoil.StatusVerdict(400)
		v.Code = "context_length_exceeded"
		return recoil.Mark(fmt.Errorf("%s: prompt is too long", name), v)
	}
	tests := []struct {
		name      string
		contexts  []int // each target's MaxContext, named t0, t1, …
		fits      int   // the prompt's length: a target with a shorter context refuses it
		attempts  int
		wantRoute string
		wantErr   error
	}{
		{"8k, 32k, 128k", []int{8_000, 32_000, 128_000}, 100_000, 3, "t0 t1 t2", nil},
		{"a shorter context is passed over", []int{8_000, 4_000, 32_000, 128_000}, 100_000, 3, "t0 t2 t3", nil},
		{"none long enough", []int{8_000, 32_000}, 100_000, 3, "t0 t1", recoil.ErrPermanent},
		{"bounded by MaxAttempts", []int{8_000, 16_000, 32_000, 128_000}, 100_000, 3, "t0 t1 t2", recoil.ErrAttemptsExhausted},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := &recoil.Fallback{}
				for i, c := range tt.contexts {
					f.Targets = append(f.Targets, recoil.Target{Name: fmt.Sprintf("t%d", i), MaxContext: c})
				}
				p := &recoil.Policy{MaxAttempts: tt.attempts, Budget: recoil.NoBudget, Fallback: f}
				var route []string
				err := recoil.DoTarget(context.Background(), p, func(_ context.Context, tg *recoil.Target) error {
					route = append(route, tg.Name)
					if tg.MaxContext < tt.fits {
						return tooLong(tg.Name)
					}
					return nil
				})
				if got := strings.Join(route, " "); got != tt.wantRoute {
					t.Errorf("route = %q, want %q", got, tt.wantRoute)
				}
				if tt.wantErr == nil && err != nil || tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
					t.Errorf("DoTarget = %v, want %v", err, tt.wantErr)
				}
			})
		})
	}
}
