package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestCrashLine(t *testing.T) {
	tests := []struct {
		name     string
		problems []string
		want     string
	}{
		{"none", []string{"example.com/m/dep: could not import x (no package vetx file)"}, ""},
		{"stack overflow", []string{"runtime: goroutine stack exceeds 1000000000-byte limit", "fatal error: stack overflow"}, "fatal error: stack overflow"},
		{"panic in a joined line", []string{"# example.com/m\npanic: runtime error: index out of range"}, "panic: runtime error: index out of range"},
		{"a finding that mentions panic", []string{"x.go:3:1: nojitter: the panic: word mid-line"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := crashLine(tt.problems); got != tt.want {
				t.Errorf("crashLine = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestTableWarnsOfCrashes(t *testing.T) {
	rs := []result{
		{labelled: labelled{split: "fresh", module: "b@v1", fn: "F"}, got: map[string]string{}, crash: "fatal error: stack overflow"},
		{labelled: labelled{split: "fresh", module: "a@v1", fn: "G"}, got: map[string]string{}},
		{labelled: labelled{split: "train", module: "c@v1", fn: "H"}, got: map[string]string{}, crash: "panic: x"},
	}
	var b bytes.Buffer
	printTable(&b, "fresh", rs, false)
	if !strings.Contains(b.String(), "WARNING: the analyzer crashed while vetting 1 of them") || !strings.Contains(b.String(), "b@v1") || strings.Contains(b.String(), "c@v1") {
		t.Errorf("table:\n%s", b.String())
	}
}
