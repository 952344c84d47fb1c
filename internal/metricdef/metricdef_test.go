package metricdef_test

import (
	"errors"
	"testing"

	"github.com/recoil-go/recoil"
	"github.com/recoil-go/recoil/internal/metricdef"
)

func TestOutcome(t *testing.T) {
	boom := errors.New("boom")
	tests := []struct {
		name string
		e    recoil.AttemptEvent
		want string
	}{
		{"success", recoil.AttemptEvent{Attempt: 1}, "success"},
		{"failure", recoil.AttemptEvent{Err: boom, Verdict: recoil.Verdict{Class: recoil.ClassOverloaded}}, "overloaded"},
		{"canceled by the caller", recoil.AttemptEvent{Err: boom, Verdict: recoil.Verdict{Class: recoil.ClassCanceled}}, "canceled"},
		// A hedge's loser is reported with no error and a canceled verdict.
		{"abandoned when another answered", recoil.AttemptEvent{Verdict: recoil.Verdict{Class: recoil.ClassCanceled, Reason: "another attempt answered first"}}, "canceled"},
	}
	for _, tt := range tests {
		if got := metricdef.Outcome(tt.e); got != tt.want {
			t.Errorf("%s: Outcome = %q, want %q", tt.name, got, tt.want)
		}
		if i := metricdef.OutcomeIndex(tt.e); i < 0 || metricdef.Outcomes()[i] != tt.want {
			t.Errorf("%s: OutcomeIndex = %d, want the index of %q", tt.name, i, tt.want)
		}
	}
}
