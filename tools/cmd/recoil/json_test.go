package main

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/recoil-go/recoil"
	"github.com/recoil-go/recoil/tools/cmd/recoil/internal/demo"
	"github.com/recoil-go/recoil/tools/gateway"
)

// Every -json output, and the gateway's /stats, follows one convention
// (package internal/textfmt): durations in float milliseconds in fields
// ending in _ms, never nanoseconds or seconds; stop reasons spelled as
// recoil.Reason.String().
func TestJSONConvention(t *testing.T) {
	// Half the attempts answered 400 (permanent): some logical requests stop,
	// with a reason to check, and the rest are accepted.
	_, url := loadGateway(t, gateway.Config{FailureRate: 0.5, FailureStatus: 400, Seed: 1})
	outputs := map[string]func(t *testing.T) []byte{
		"sim": func(t *testing.T) []byte {
			return cliJSON(t, "sim", "-json", "gateway-outage")
		},
		"blast": func(t *testing.T) []byte { return cliJSON(t, "blast", "-json") },
		"load": func(t *testing.T) []byte {
			return cliJSON(t, "load", "-json", "-url", url+"/v1/charges", "-policy", "default", "-requests", "20", "-pause", "0s")
		},
		"demo": func(t *testing.T) []byte {
			b, err := json.Marshal(demo.Report{Outage: time.Second, Window: 200 * time.Millisecond,
				Rows: []demo.Row{{Callers: 4, Policy: "default", Runs: 1,
					Measured: demo.Figures{AllOKAt: demo.Times{Median: time.Second, Min: time.Second, Max: time.Second, Values: []time.Duration{time.Second}}}}}})
			if err != nil {
				t.Fatal(err)
			}
			return b
		},
		"gateway /stats": func(t *testing.T) []byte {
			resp, err := http.Get(url + "/stats")
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, err := io.ReadAll(resp.Body)
			if err != nil {
				t.Fatal(err)
			}
			return b
		},
	}
	reasons := map[string]bool{"timeout": true} // load: the logical request's own timeout
	for r := recoil.ReasonNone; r <= recoil.ReasonCanceled; r++ {
		reasons[r.String()] = true
	}
	for name, get := range outputs {
		t.Run(name, func(t *testing.T) {
			var v any
			b := get(t)
			if err := json.Unmarshal(b, &v); err != nil {
				t.Fatalf("not one JSON value: %v\n%s", err, b)
			}
			var durations, stops int
			walkJSON(v, "", func(path, key string, val any) {
				switch {
				case strings.HasSuffix(key, "_ns"), strings.HasSuffix(key, "_s") && !strings.HasSuffix(key, "_per_s"):
					t.Errorf("%s: a duration not in milliseconds", path)
				case strings.HasSuffix(key, "_ms"):
					durations++
					if !numbers(val) {
						t.Errorf("%s = %v: a _ms field holds a number, numbers, or null", path, val)
					}
				}
				if strings.HasSuffix(path, ".stops") || strings.HasSuffix(path, ".failed_by") {
					for reason := range val.(map[string]any) {
						stops++
						if !reasons[reason] {
							t.Errorf("%s: stop reason %q is not spelled as recoil.Reason.String()", path, reason)
						}
					}
				}
			})
			if durations == 0 {
				t.Errorf("no _ms field at all:\n%s", b)
			}
			if (name == "sim" || name == "load") && stops == 0 {
				t.Errorf("no stop reason to check:\n%s", b)
			}
		})
	}
}

// cliJSON runs the command and returns its stdout, failing the test on a
// non-zero exit.
func cliJSON(t *testing.T, args ...string) []byte {
	t.Helper()
	c := runCLI(t.Context(), args...)
	if c.code != 0 {
		t.Fatalf("recoil %q: exit %d; stderr:\n%s", args, c.code, c.stderr)
	}
	return []byte(c.stdout)
}

// numbers reports whether v is a number, a list of numbers, or null.
func numbers(v any) bool {
	switch v := v.(type) {
	case nil, float64:
		return true
	case []any:
		for _, e := range v {
			if _, ok := e.(float64); !ok {
				return false
			}
		}
		return true
	}
	return false
}

// walkJSON calls f for every object member in v, with its dotted path.
func walkJSON(v any, path string, f func(path, key string, val any)) {
	switch v := v.(type) {
	case map[string]any:
		for k, val := range v {
			p := path + "." + k
			f(p, k, val)
			walkJSON(val, p, f)
		}
	case []any:
		for _, val := range v {
			walkJSON(val, path+"[]", f)
		}
	}
}
