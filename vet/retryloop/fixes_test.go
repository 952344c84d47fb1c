package retryloop_test

import (
	"bytes"
	"go/format"
	"go/token"
	"os"
	"slices"
	"testing"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/analysis/analysistest"
)

// fixPackages are the testdata packages whose files have a .golden twin:
// every suggested fix in them is applied and the result compared.
var fixPackages = []string{"fixes"}

// TestSuggestedFixes applies every fix the shared run suggested in the
// fix packages and compares each file with its .golden file: time.Sleep
// with a context in scope becomes a select that leaves the way the
// function already leaves on cancellation, a stacked SDK client gets
// WithMaxRetries(0), a stacked gRPC channel WithDisableRetry.
func TestSuggestedFixes(t *testing.T) {
	res, _ := run(t)
	for _, r := range res {
		if r.Pass == nil || !slices.Contains(fixPackages, r.Pass.Pkg.Path()) {
			continue
		}
		edits := map[string][]analysis.TextEdit{}
		for _, d := range r.Diagnostics {
			for _, f := range d.SuggestedFixes {
				for _, e := range f.TextEdits {
					name := r.Pass.Fset.File(e.Pos).Name()
					edits[name] = append(edits[name], e)
				}
			}
		}
		for _, f := range r.Pass.Files {
			name := r.Pass.Fset.File(f.Pos()).Name()
			checkGolden(t, r, name, edits[name])
		}
	}
}

// checkGolden applies edits to file name and compares the formatted
// result with name.golden.
func checkGolden(t *testing.T, r *analysistest.Result, name string, edits []analysis.TextEdit) {
	t.Helper()
	src, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	tf := r.Pass.Fset.File(edits0Pos(r, name))
	slices.SortFunc(edits, func(a, b analysis.TextEdit) int { return int(b.Pos) - int(a.Pos) })
	out := slices.Clone(src)
	last := len(out) + 1
	for _, e := range edits {
		start, end := tf.Offset(e.Pos), tf.Offset(e.End)
		if end > last {
			t.Errorf("%s: overlapping fixes at offset %d", name, start)
			continue
		}
		out = slices.Concat(out[:start], e.NewText, out[end:])
		last = start
	}
	got, err := format.Source(out)
	if err != nil {
		t.Errorf("%s: the fixed file does not parse: %v\n%s", name, err, out)
		return
	}
	want, err := os.ReadFile(name + ".golden")
	if err != nil {
		t.Fatalf("every file of a fix package needs a .golden twin: %v", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s: fixed file differs from its .golden:\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

// edits0Pos is a position inside file name, to find its token.File.
func edits0Pos(r *analysistest.Result, name string) token.Pos {
	for _, f := range r.Pass.Files {
		if r.Pass.Fset.File(f.Pos()).Name() == name {
			return f.Pos()
		}
	}
	return token.NoPos
}
