package textfmt

import (
	"testing"
	"time"
)

func TestDuration(t *testing.T) {
	tests := []struct {
		d    time.Duration
		want string
	}{
		{0, "0"},
		{500, "500ns"},
		{48 * time.Microsecond, "48.0µs"},
		{716 * time.Millisecond, "716ms"},
		{1250 * time.Millisecond, "1.25s"},
		{14*time.Minute + 41*time.Second, "14m41s"},
		{2*time.Hour + 5*time.Minute, "2h5m"},
		{-3 * time.Second, "-3.00s"},
	}
	for _, tt := range tests {
		if got := Duration(tt.d); got != tt.want {
			t.Errorf("Duration(%v) = %q, want %q", tt.d, got, tt.want)
		}
	}
}
