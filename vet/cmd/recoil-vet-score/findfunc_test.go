package main

import (
	"strings"
	"testing"
)

// A labelled function in a file build constraints leave out (go-ycsb's
// sqlite driver needs -tags libsqlite3) is not scored: go vet never saw
// it, and counting it as found clean would score a miss the analyzer
// was never shown.
func TestFindFuncBuildConstraints(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"a.go":      "package p\n\nfunc A() {}\n\ntype T struct{}\n\nfunc (*T) M() {}\n",
		"b.go":      "//go:build recoilnevertagged\n\npackage p\n\nfunc B() {}\n",
		"doc.go":    "// Package p is a package.\npackage p\n",
		"a_test.go": "package p\n\nfunc C() {}\n",
	}
	writeTree(t, dir, files)
	tests := []struct {
		fn      string
		wantErr string // "" if found
		line    int
	}{
		{"A", "", 3},
		{"T.M", "", 7},
		{"B", "build constraints leave out", 0},
		{"C", "no function C", 0}, // test files are not searched
	}
	for _, tt := range tests {
		sp, err := findFunc(dir, tt.fn)
		switch {
		case tt.wantErr == "" && err != nil:
			t.Errorf("findFunc(%s): %v", tt.fn, err)
		case tt.wantErr == "" && sp.first != tt.line:
			t.Errorf("findFunc(%s) at line %d, want %d", tt.fn, sp.first, tt.line)
		case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
			t.Errorf("findFunc(%s) = %v, want an error containing %q", tt.fn, err, tt.wantErr)
		}
	}
}
