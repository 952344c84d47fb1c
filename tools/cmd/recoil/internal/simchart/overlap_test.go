package simchart

import "testing"

func TestCoinciding(t *testing.T) {
	base := []float64{0, 10, 50, 90, 100}
	tests := []struct {
		name      string
		ys        []float64
		share     float64
		want      int
		wantExact bool
	}{
		{"the same", []float64{0, 10, 50, 90, 100}, 1, 0, true},
		{"within 1.5 % of the top", []float64{1, 11, 51, 91, 99}, 1, 0, false},
		{"apart", []float64{0, 30, 70, 90, 100}, 1, -1, false},
		{"on it for 60 % of a time line", []float64{0, 10, 50, 0, 0}, coincideShare, 0, false},
	}
	for _, tt := range tests {
		got, exact := coinciding(tt.ys, [][]float64{base}, 100, tt.share, nil)
		if got != tt.want || exact != tt.wantExact {
			t.Errorf("%s: coinciding = %d, %v; want %d, %v", tt.name, got, exact, tt.want, tt.wantExact)
		}
	}
	// Where every line lies together nothing is hidden: a line that meets
	// another only there is not dashed.
	lines := [][]float64{{5, 5, 5, 80, 90}, {5, 5, 5, 0, 0}, {5, 5, 5, 40, 0}}
	skip := together(lines, 1)
	if got, _ := coinciding(lines[2], lines[:2], 100, coincideShare, skip); got != 1 {
		t.Errorf("coinciding past the shared baseline = %d, want 1 (on the second line at its last value)", got)
	}
	if got, _ := coinciding(lines[1], lines[:1], 100, coincideShare, skip); got != -1 {
		t.Errorf("coinciding on the shared baseline only = %d, want -1", got)
	}
}
