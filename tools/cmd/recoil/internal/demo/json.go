package demo

import (
	"encoding/json"

	"github.com/recoil-go/recoil/tools/internal/textfmt"
)

// MarshalJSON writes the report with its durations in float milliseconds,
// the convention of every recoil -json output (package internal/textfmt).
func (r Report) MarshalJSON() ([]byte, error) {
	type fields Report
	return json.Marshal(struct {
		fields
		Outage float64 `json:"outage_ms"`
		Window float64 `json:"window_ms"`
	}{fields(r), textfmt.Millis(r.Outage), textfmt.Millis(r.Window)})
}

// MarshalJSON writes the machine's figures in float milliseconds.
func (m Machine) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		PerAttempt      float64 `json:"per_attempt_ms"`
		RoundTrip       float64 `json:"round_trip_ms"`
		PerAttemptAfter float64 `json:"per_attempt_after_ms,omitempty"`
	}{textfmt.Millis(m.PerAttempt), textfmt.Millis(m.RoundTrip), textfmt.Millis(m.PerAttemptAfter)})
}
