package main

import (
	"os"
	"testing"
)

// TestCorpusParses reads the committed labels file the way a scoring run
// does, so that a line it would refuse (an unknown split, a label written
// with commas, a function labelled twice) fails here, in seconds, rather
// than minutes into a run that downloads the modules.
func TestCorpusParses(t *testing.T) {
	f, err := os.Open("../../corpus/labels.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cases, err := parseLabels(f)
	if err != nil {
		t.Fatal(err)
	}
	per := map[string]int{}
	for _, c := range cases {
		per[c.split]++
	}
	for _, s := range splits {
		if per[s] == 0 {
			t.Errorf("split %s has no function in the labels file", s)
		}
	}
	t.Logf("%d functions: %v", len(cases), per)
}
