package textfmt

import "testing"

func TestWrap(t *testing.T) {
	tests := []struct {
		s      string
		width  int
		indent string
		want   string
	}{
		{"one two three", 0, "", "one two three"},
		{"one two three", 7, "", "one two\nthree"},
		{"one two three", 7, "  ", "one two\n  three"},
		{"a  b\nc", 10, "", "a b c"},
		{"averyverylongword x", 5, "", "averyverylongword\nx"},
		{"", 10, "", ""},
	}
	for _, tt := range tests {
		if got := Wrap(tt.s, tt.width, tt.indent); got != tt.want {
			t.Errorf("Wrap(%q, %d, %q) = %q, want %q", tt.s, tt.width, tt.indent, got, tt.want)
		}
	}
}
