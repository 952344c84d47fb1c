package sim

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestTableSplitsAtWidth(t *testing.T) {
	tab := &table{title: "things", keys: 1, head: []string{"name", "alpha", "beta", "gamma", "delta"}}
	tab.add("first", "1", "22", "333", "4444")
	tab.add("second", "", "2", "", "4")
	tests := []struct {
		width int
		parts int
	}{
		{0, 1},
		{100, 1},
		{30, 2},
		{15, 4}, // a column wider than the width still gets a part of its own
	}
	for _, tt := range tests {
		var b bytes.Buffer
		tab.write(&b, tt.width)
		out := b.String()
		if got := strings.Count(out, "name"); got != tt.parts {
			t.Errorf("width %d: %d parts, want %d:\n%s", tt.width, got, tt.parts, out)
		}
		for line := range strings.Lines(out) {
			line = strings.TrimSuffix(line, "\n")
			if tt.width >= 30 && utf8.RuneCountInString(line) > tt.width {
				t.Errorf("width %d: line %q is %d wide", tt.width, line, utf8.RuneCountInString(line))
			}
			if strings.HasSuffix(line, " ") {
				t.Errorf("width %d: line %q ends in a space", tt.width, line)
			}
		}
		for _, col := range tab.head {
			if !strings.Contains(out, col) {
				t.Errorf("width %d: column %q lost:\n%s", tt.width, col, out)
			}
		}
	}
}

func TestSplitColumnsBalances(t *testing.T) {
	// Six columns of 8 after a key of 10: at width 60 a greedy cut leaves
	// one column alone; a balanced one puts three and three.
	got := splitColumns([]int{10, 8, 8, 8, 8, 8, 8}, 1, 60)
	if len(got) != 2 || len(got[0]) != 4 || len(got[1]) != 4 {
		t.Errorf("splitColumns = %v, want two parts of the key and three columns", got)
	}
}

// TestTextWidth: no line of a shipped scenario's golden table is wider than
// DefaultWidth, and no column is headed with a policy-language path.
func TestTextWidth(t *testing.T) {
	files, _ := filepath.Glob("testdata/*.txt")
	if len(files) == 0 {
		t.Fatal("no golden tables in testdata")
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(b), "\n") {
			if n := utf8.RuneCountInString(line); n > DefaultWidth {
				t.Errorf("%s:%d: %d characters wide, more than %d", f, i+1, n, DefaultWidth)
			}
			if strings.Contains(line, "].") {
				t.Errorf("%s:%d: a policy-language path in a table: %q", f, i+1, line)
			}
		}
	}
}

func TestDescribeSweep(t *testing.T) {
	a := DescribeSweep("services[backend].failure", false)
	if a.Noun != "failure rate at backend" || a.Value("0.05") != "5%" {
		t.Errorf("DescribeSweep = %q, Value(0.05) = %q; want failure rate at backend, 5%%", a.Noun, a.Value("0.05"))
	}
	if got := DescribeSweep("clients[callers].callers", false).Value("1000"); got != "1000" {
		t.Errorf("Value(1000) = %q, want it as written", got)
	}
}
