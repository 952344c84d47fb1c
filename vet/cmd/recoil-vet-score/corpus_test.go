package main

import (
	"strings"
	"testing"
)

// TestCorpusParses reads the committed labels the way a scoring run
// does, so that a line it would refuse (an unknown split, a label written
// with commas, a function labelled twice) fails here, in seconds, rather
// than minutes into a run that downloads the modules.
func TestCorpusParses(t *testing.T) {
	cases, err := readLabels("../../corpus/labels")
	if err != nil {
		t.Fatal(err)
	}
	per := map[string]int{}
	for _, c := range cases {
		per[c.split]++
	}
	for _, s := range splits {
		if per[s] == 0 {
			t.Errorf("split %s has no function in the labels", s)
		}
	}
	t.Logf("%d functions: %v", len(cases), per)
}

// TestReadLabelsDir reads a corpus kept in several files: in name order,
// as one, with a function labelled twice refused across files and every
// error naming its file and line.
func TestReadLabelsDir(t *testing.T) {
	const a = "# legend\n"
	const b = "train example.com/m@v1.0.0 . F clean -- one\n"
	tests := []struct {
		name    string
		files   map[string]string
		want    int
		wantErr string
	}{
		{"in name order", map[string]string{"00-legend.txt": a, "01-a.txt": b, "02-b.txt": strings.Replace(b, " F ", " G ", 1)}, 2, ""},
		{"twice across files", map[string]string{"01-a.txt": b, "02-b.txt": b}, 0, "02-b.txt:1: example.com/m@v1.0.0 . F is labelled already at 01-a.txt:1"},
		{"bad line named by file", map[string]string{"00-legend.txt": a, "01-a.txt": "train m . F\n"}, 0, "01-a.txt:1: want"},
		{"other files ignored", map[string]string{"01-a.txt": b, "notes.md": "not labels"}, 1, ""},
		{"empty directory", map[string]string{}, 0, "no *.txt labels file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			writeTree(t, dir, tt.files)
			cases, err := readLabels(dir)
			switch {
			case tt.wantErr != "":
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("readLabels: %v, want an error containing %q", err, tt.wantErr)
				}
			case err != nil:
				t.Fatal(err)
			case len(cases) != tt.want:
				t.Fatalf("%d functions, want %d", len(cases), tt.want)
			}
		})
	}
}
