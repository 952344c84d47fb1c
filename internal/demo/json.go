package demo

import (
	"encoding/json"

	"github.com/recoil-go/recoil/internal/textfmt"
)

// MarshalJSON writes the row with its durations in float milliseconds, the
// convention of every recoil -json output (package internal/textfmt).
func (r Row) MarshalJSON() ([]byte, error) {
	type fields Row
	return json.Marshal(struct {
		fields
		AllOKAt    float64 `json:"all_accepted_at_ms"`
		SimAllOKAt float64 `json:"sim_all_accepted_at_ms"`
	}{fields(r), textfmt.Millis(r.AllOKAt), textfmt.Millis(r.SimAllOKAt)})
}

// MarshalJSON writes the report with its durations in float milliseconds.
func (r Report) MarshalJSON() ([]byte, error) {
	type fields Report
	return json.Marshal(struct {
		fields
		Outage float64 `json:"outage_ms"`
		Window float64 `json:"window_ms"`
	}{fields(r), textfmt.Millis(r.Outage), textfmt.Millis(r.Window)})
}
