package sim

import (
	"encoding/json"

	"github.com/recoil-go/recoil/tools/internal/textfmt"
)

// The results encode in the convention of every recoil -json output
// (package internal/textfmt): durations in float milliseconds, in fields
// ending in _ms. Each MarshalJSON encodes the struct's other fields as
// tagged and adds its durations; the local types have no methods, so they
// do not recurse.

// MarshalJSON implements json.Marshaler.
func (r Result) MarshalJSON() ([]byte, error) {
	type fields Result
	return json.Marshal(struct {
		fields
		Window float64 `json:"window_ms"`
	}{fields(r), textfmt.Millis(r.Window)})
}

// MarshalJSON implements json.Marshaler.
func (r RunResult) MarshalJSON() ([]byte, error) {
	type fields RunResult
	return json.Marshal(struct {
		fields
		End float64 `json:"end_ms"`
	}{fields(r), textfmt.Millis(r.End)})
}

// MarshalJSON implements json.Marshaler.
func (s ServiceResult) MarshalJSON() ([]byte, error) {
	type fields ServiceResult
	return json.Marshal(struct {
		fields
		PeakAt float64 `json:"peak_at_ms"`
	}{fields(s), textfmt.Millis(s.PeakAt)})
}

// MarshalJSON implements json.Marshaler.
func (o OutageResult) MarshalJSON() ([]byte, error) {
	type fields OutageResult
	return json.Marshal(struct {
		fields
		Start       float64 `json:"start_ms"`
		End         float64 `json:"end_ms"`
		RecoveredAt float64 `json:"recovered_at_ms"`
	}{fields(o), textfmt.Millis(o.Start), textfmt.Millis(o.End), textfmt.Millis(o.RecoveredAt)})
}

// MarshalJSON implements json.Marshaler.
func (p Percentiles) MarshalJSON() ([]byte, error) {
	type fields Percentiles
	return json.Marshal(struct {
		fields
		Mean float64 `json:"mean_ms"`
		P50  float64 `json:"p50_ms"`
		P90  float64 `json:"p90_ms"`
		P99  float64 `json:"p99_ms"`
		Max  float64 `json:"max_ms"`
	}{fields(p), textfmt.Millis(p.Mean), textfmt.Millis(p.P50), textfmt.Millis(p.P90), textfmt.Millis(p.P99), textfmt.Millis(p.Max)})
}
