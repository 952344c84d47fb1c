package sim

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// TestGolden runs shipped scenarios and compares every output format with
// the golden files in testdata: the same seed gives byte-identical output,
// run after run and machine after machine. Refresh them with
// go test ./sim -run TestGolden -update.
//
// The cheap scenario runs twice in the process and the second run must
// match the first byte for byte; the long ones run once by default (the
// golden file, written by an earlier process, is their second run) and
// twice under RECOIL_LONG=1. slow-tail-hedge, whose run costs more than
// all the others together (13 s of CPU under -race), is compared under
// RECOIL_LONG=1 only.
func TestGolden(t *testing.T) {
	t.Parallel()
	tests := []struct {
		scenario string
		seed     uint64
		formats  []string
		twice    bool
		onlyLong bool
	}{
		{"gateway-outage", 1, []string{"txt", "json", "csv"}, true, false},
		{"blast-radius", 1, []string{"txt"}, long(), false},
		{"occ-contention", 1, []string{"txt"}, long(), false},
		{"gateway-outage", 7, []string{"txt"}, true, false},
		{"slow-provider", 1, []string{"txt", "json"}, true, false},
		{"fallback-chain", 1, []string{"txt", "json"}, true, false},
		{"slow-tail-hedge", 1, []string{"txt"}, true, true},
	}
	for _, tt := range tests {
		if tt.onlyLong && !long() {
			t.Logf("%s seed %d: compared under RECOIL_LONG=1", tt.scenario, tt.seed)
			continue
		}
		s := builtin(t, tt.scenario)
		var first map[string][]byte
		runs := 1
		if tt.twice {
			runs = 2
		}
		for i := range runs {
			r := runShipped(t, tt.scenario, tt.seed) // the run other tests read
			if i > 0 {
				r = run(t, s, tt.seed) // and a fresh one
			}
			out := map[string][]byte{}
			for _, f := range tt.formats {
				var b bytes.Buffer
				var err error
				switch f {
				case "txt":
					err = r.WriteText(&b)
				case "json":
					err = r.WriteJSON(&b)
				case "csv":
					err = r.WriteCSV(&b)
				}
				if err != nil {
					t.Fatal(err)
				}
				out[f] = b.Bytes()
			}
			if first == nil {
				first = out
				continue
			}
			for f := range out {
				if !bytes.Equal(out[f], first[f]) {
					t.Errorf("%s seed %d: two runs gave different %s output", tt.scenario, tt.seed, f)
				}
			}
		}
		for _, f := range tt.formats {
			name := filepath.Join("testdata", tt.scenario+".seed"+itoa(int(tt.seed))+"."+f)
			if *update {
				if err := os.MkdirAll("testdata", 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(name, first[f], 0o644); err != nil {
					t.Fatal(err)
				}
				continue
			}
			want, err := os.ReadFile(name)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if !bytes.Equal(first[f], want) {
				t.Errorf("%s seed %d: %s output differs from %s (run with -update if the change is intended):\n%s",
					tt.scenario, tt.seed, f, name, first[f])
			}
		}
	}
}

// TestSeedsDiffer guards the golden test against a seed that does nothing.
func TestSeedsDiffer(t *testing.T) {
	t.Parallel()
	s := builtin(t, "gateway-outage")
	var a, b bytes.Buffer
	if err := runShipped(t, "gateway-outage", 1).WriteJSON(&a); err != nil {
		t.Fatal(err)
	}
	if err := run(t, s, 2).WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Error("seeds 1 and 2 gave identical output")
	}
}
