package audit

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"testing"
)

// checkParsed fails the fuzz run when a parser's result or error breaks
// its contract: an error is an *Error naming a file, a result is finite
// and consistent.
func checkParsed(t *testing.T, r Retry, err error, files ...string) {
	t.Helper()
	if err != nil {
		var e *Error
		if !errors.As(err, &e) || e.Line < 0 {
			t.Fatalf("error %v (%T) is not an *Error with a line", err, err)
		}
		ok := false
		for _, f := range files {
			ok = ok || e.File == f
		}
		if !ok {
			t.Fatalf("error %v names file %q, want one of %q", err, e.File, files)
		}
		return
	}
	if r.Attempts < 1 || r.Attempts > envoyMaxRetries+1 {
		t.Fatalf("attempts %d out of range", r.Attempts)
	}
	if !r.Hedged && r.Kind != KindNone && len(r.Waits) != r.Attempts-1 {
		t.Fatalf("%d waits for %d attempts", len(r.Waits), r.Attempts)
	}
	for _, w := range r.Waits {
		if w < 0 || w > maxDuration {
			t.Fatalf("wait %v out of range", w)
		}
	}
	if r.Timeout < 0 || r.PerTry < 0 || r.HedgeDelay < 0 {
		t.Fatalf("negative duration: %+v", r)
	}
	if s := r.sustained(Class503, 100); !(s >= 1 && s <= float64(r.Attempts)) {
		t.Fatalf("sustained %v outside [1, %d]", s, r.Attempts)
	}
}

func seedDir(f *testing.F, dir, pattern string) {
	names, _ := filepath.Glob(filepath.Join(dir, pattern))
	for _, n := range names {
		if b, err := os.ReadFile(n); err == nil {
			f.Add(b)
		}
	}
}

// FuzzEnvoy: any route configuration or bootstrap is read or refused with
// an *Error, never a panic.
func FuzzEnvoy(f *testing.F) {
	seedDir(f, examples, "envoy*.yaml")
	f.Add([]byte("virtual_hosts:\n  - routes:\n      - route: {cluster: c, retry_policy: {num_retries: {value: 3}, retry_back_off: {base_interval: {seconds: 1}}}}\n"))
	f.Add([]byte("virtual_hosts: &v [{routes: [{route: {cluster: *v}}]}]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := parseEnvoy("c", data, selector{field: "route", at: Source{File: "m.yaml", Line: 1}}, "b")
		checkParsed(t, r, err, "c", "m.yaml")
	})
}

// FuzzGRPC: any JSON is read or refused with an *Error, never a panic.
func FuzzGRPC(f *testing.F) {
	seedDir(f, examples, "*.json")
	seedDir(f, "testdata/fanout", "*.json")
	f.Add([]byte(`{"methodConfig": [{"name": [{}], "hedgingPolicy": {"maxAttempts": "9", "hedgingDelay": "0.000000001s"}}]}`))
	f.Add([]byte(`[[[[[[{"a": "\u00e9"}]]]]]]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := parseGRPC("c", data, selector{field: "method", at: Source{File: "m.yaml", Line: 1}})
		checkParsed(t, r, err, "c", "m.yaml")
	})
}

// FuzzIstio: any VirtualService is read or refused with an *Error, never
// a panic.
func FuzzIstio(f *testing.F) {
	seedDir(f, "testdata/fanout", "*vs.yaml")
	f.Add([]byte("spec:\n  http:\n    - retries: {attempts: 3, perTryTimeout: 1ms, retryOn: 5xx}\n      timeout: 24h\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := parseIstio("c", data, selector{field: "route", at: Source{File: "m.yaml", Line: 1}}, "b", SidecarDefault{})
		checkParsed(t, r, err, "c", "m.yaml")
	})
}

// FuzzMesh: any mesh file over the shipped configurations is parsed and
// analysed, or refused with an *Error; the figures are finite.
func FuzzMesh(f *testing.F) {
	seedDir(f, examples, "*mesh*.yaml")
	seedDir(f, examples, "hop.yaml")
	seedDir(f, "testdata/fanout", "mesh.yaml")
	f.Add([]byte("services: [a, b, c]\nentries: [a]\nedges:\n  - {from: a, to: b, kind: none}\n  - {from: b, to: c, kind: none}\n  - {from: c, to: b, kind: none}\n"))
	configs := map[string][]byte{}
	for _, dir := range []string{examples, "testdata/fanout"} {
		names, _ := filepath.Glob(filepath.Join(dir, "*"))
		for _, n := range names {
			if b, err := os.ReadFile(n); err == nil {
				configs[filepath.Base(n)] = b
			}
		}
	}
	open := func(name string) ([]byte, error) {
		if b, ok := configs[name]; ok {
			return b, nil
		}
		return nil, os.ErrNotExist
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := Parse("m.yaml", data, open)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || e.File == "" {
				t.Fatalf("Parse error %v (%T) is not an *Error naming a file", err, err)
			}
			return
		}
		r, err := Analyze(m, DefaultOptions())
		if err != nil {
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("Analyze: %v", err)
			}
			return
		}
		for _, er := range r.Entries {
			for _, s := range er.Services {
				for _, x := range []float64{s.WorstCase, s.Bounded, s.Sustained, s.Amplification, s.Persistent} {
					if math.IsNaN(x) || x < 0 {
						t.Fatalf("%s: a figure is %v: %+v", s.Service, x, s)
					}
				}
				if s.Bounded > s.WorstCase || s.Sustained > s.WorstCase*(1+1e-12) {
					t.Fatalf("%s: bounded %v or sustained %v above the worst case %v", s.Service, s.Bounded, s.Sustained, s.WorstCase)
				}
			}
		}
		_ = m.Columns()
	})
}

// FuzzInfer: any file, as any kind, is read or refused with an *Error,
// and any files build a mesh or are refused with one; never a panic.
func FuzzInfer(f *testing.F) {
	f.Add([]byte("---\n---\nkind: List\nitems:\n  - kind: VirtualService\n    metadata: {name: a}\n    spec: {hosts: [a], gateways: [g], http: [{retries: {attempts: 2, retryOn: \"503,reset\"}, route: [{destination: {host: b}}]}]}\n"))
	f.Add([]byte("- virtualHosts: [{routes: [{route: {cluster: c, retryPolicy: {numRetries: 2, retryOn: 5xx}, hedgePolicy: {hedgeOnPerTryTimeout: true}}}]}]\n"))
	f.Add([]byte(`{"MethodConfig": [{"Name": [{"Service": "s"}], "Timeout": "1s", "RetryPolicy": {"InitialBackoff": ".01s", "MaxBackoff": "1s", "BackoffMultiplier": 2, "RetryableStatusCodes": ["UNAVAILABLE"]}}]}`))
	f.Add([]byte("kind: VirtualService\nmetadata: {name: r}\nspec: {hosts: [r], http: [{retries: {attempts: 2}, route: [{destination: {host: r, subset: v2, port: {number: 9080}}}]}]}\n---\nkind: DestinationRule\nmetadata: {name: r}\nspec:\n  host: r\n  trafficPolicy: {retryBudget: {percent: 20}, portLevelSettings: [{port: {number: 9080}, connectionPool: {http: {maxRetries: 2}}}]}\n  subsets: [{name: v2, trafficPolicy: {retryBudget: {percent: {value: 5}}, outlierDetection: {consecutive5xxErrors: 3}}}]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, kind := range []string{KindEnvoy, KindIstio, KindGRPC} {
			if _, err := ReadConfig(kind, "c", data); err != nil {
				var ye *Error
				if !errors.As(err, &ye) {
					t.Fatalf("%s: %T %v, want an *Error", kind, err, err)
				}
			}
		}
		m, err := Infer("in", []File{{Name: "c", Data: data}}, LoadOptions{})
		if err != nil {
			return
		}
		if _, err := Analyze(m, DefaultOptions()); err != nil {
			var ye *Error
			if !errors.As(err, &ye) {
				t.Fatalf("Analyze: %T %v", err, err)
			}
		}
	})
}
