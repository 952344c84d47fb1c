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

func TestCounts(t *testing.T) {
	tests := []struct {
		m    map[string]int64
		want string
	}{
		{nil, "-"},
		{map[string]int64{"deadline": 1, "attempts exhausted": 2}, "attempts exhausted 2, deadline 1"},
		{map[string]int64{"503": 21, "200": 3}, "200 3, 503 21"},
	}
	for _, tt := range tests {
		if got := Counts(tt.m); got != tt.want {
			t.Errorf("Counts(%v) = %q, want %q", tt.m, got, tt.want)
		}
	}
}

func TestMillis(t *testing.T) {
	tests := []struct {
		d    time.Duration
		want float64
	}{
		{0, 0},
		{1500 * time.Microsecond, 1.5},
		{2 * time.Second, 2000},
		{-time.Millisecond, -1},
	}
	for _, tt := range tests {
		if got := Millis(tt.d); got != tt.want {
			t.Errorf("Millis(%v) = %v, want %v", tt.d, got, tt.want)
		}
	}
}
