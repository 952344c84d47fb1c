package sim

import (
	"math"
	"strconv"
)

// Sweep runs a scenario once per value of one field. Path names the field
// by its YAML keys, with list elements selected by name or index:
// "clients[callers].callers", "services[db].failure",
// "services[app].workers". Values are written as they would be in the
// file; From, To and Step generate numeric values instead.
type Sweep struct {
	Path   string   `yaml:"path" json:"path"`
	Values []string `yaml:"values" json:"values,omitempty"`
	From   float64  `yaml:"from" json:"from,omitempty"`
	To     float64  `yaml:"to" json:"to,omitempty"`
	Step   float64  `yaml:"step" json:"step,omitempty"`

	Pos Pos `yaml:"-" json:"-"`
}

// points returns the sweep's values.
func (s *Sweep) points() []string {
	if len(s.Values) > 0 {
		return s.Values
	}
	var out []string
	if s.Step <= 0 {
		return nil
	}
	for i := 0; ; i++ {
		x := s.From + float64(i)*s.Step
		if x > s.To+s.Step*1e-9 || i > 10000 {
			break
		}
		out = append(out, strconv.FormatFloat(math.Round(x*1e9)/1e9, 'g', -1, 64))
	}
	return out
}

// validate checks the sweep: a field to sweep, and values or a range of at
// most 1000 of them.
func (sw *Sweep) validate(v *validator) {
	if sw.Path == "" {
		v.errf(sw.Pos, "path", "missing: name the field to sweep, such as services[db].failure")
	}
	if len(sw.Values) > 0 && (sw.From != 0 || sw.To != 0 || sw.Step != 0) {
		v.errf(sw.Pos, "values", "give either values or from/to/step")
	}
	if len(sw.Values) == 0 && (sw.Step <= 0 || sw.To < sw.From) {
		v.errf(sw.Pos, "step", "give values, or from <= to and a positive step")
	}
	if n := len(sw.points()); n > 1000 {
		v.errf(sw.Pos, "step", "%d values; at most 1000", n)
	}
}
