package audit

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const examples = "../../examples/mesh"

func analyzeFile(t *testing.T, path string, o Options) *Report {
	t.Helper()
	m, err := Load(path)
	if err != nil {
		t.Fatalf("Load(%s): %v", path, err)
	}
	r, err := Analyze(m, o)
	if err != nil {
		t.Fatalf("Analyze(%s): %v", path, err)
	}
	return r
}

func reachOf(t *testing.T, er EntryReport, service string) Reach {
	t.Helper()
	for _, s := range er.Services {
		if s.Service == service {
			return s
		}
	}
	t.Fatalf("entry %s reaches no %s", er.Entry, service)
	return Reach{}
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

func findingKeys(fs []Finding) []string {
	var out []string
	for _, f := range fs {
		out = append(out, fmt.Sprintf("%s %s %s", f.At, f.Check, f.Edge))
	}
	return out
}

// TestShippedMesh pins the figures docs/audit.md shows for the shipped
// mesh: three layers of three attempts — an Envoy route, a gRPC service
// config, a recoil policy — send 27 attempts to the model API, and each
// finding is at its file and line.
func TestShippedMesh(t *testing.T) {
	r := analyzeFile(t, filepath.Join(examples, "mesh.yaml"), DefaultOptions())
	if len(r.Entries) != 1 {
		t.Fatalf("%d entries, want 1", len(r.Entries))
	}
	er := r.Entries[0]
	for _, tt := range []struct {
		service                      string
		worst, bounded, sustained    float64
		persistentTip, persistentAmp float64
	}{
		{"frontend", 3, 3, 3, 0.2 / 2, 1.2},
		{"backend", 9, 9, 9, 0.2 / 8, 1.8},
		{"model-api", 27, 27, 27, 0.2 / 26, 3.6},
	} {
		s := reachOf(t, er, tt.service)
		if s.WorstCase != tt.worst || s.Bounded != tt.bounded || s.Sustained != tt.sustained {
			t.Errorf("%s: worst %v, bounded %v, sustained %v; want %v, %v, %v", tt.service, s.WorstCase, s.Bounded, s.Sustained, tt.worst, tt.bounded, tt.sustained)
		}
		if !s.PersistentTipping.Exists || !near(s.PersistentTipping.Exact, tt.persistentTip) {
			t.Errorf("%s: persistent tipping %+v, want %v", tt.service, s.PersistentTipping, tt.persistentTip)
		}
		if !near(s.Persistent, tt.persistentAmp) {
			t.Errorf("%s: persistent amplification at 10%% %v, want %v", tt.service, s.Persistent, tt.persistentAmp)
		}
	}
	if s := reachOf(t, er, "model-api"); !s.Leaf || s.Paths != 1 || s.Overloaded {
		t.Errorf("model-api: %+v, want a leaf on one path, not overloaded at 10%%", s)
	}
	// The Envoy route is retried with backoff: blast's one layer with
	// backoff tips at √5.6 − 2 = 36.64 % (docs/why.md §3).
	if s := reachOf(t, er, "frontend"); !near(s.Tipping.Exact, math.Sqrt(5.6)-2) || s.Tipping.Slider != 0.37 {
		t.Errorf("frontend tipping %+v, want √5.6 − 2, slider 37%%", s.Tipping)
	}
	if er.PersistentTipsAt != "model-api" || !near(er.PersistentTipping.Exact, 0.2/26) || er.PersistentTipping.Slider != 0.01 {
		t.Errorf("entry persistent tipping %+v at %s, want 0.2/26 at model-api, slider 1%%", er.PersistentTipping, er.PersistentTipsAt)
	}
	if er.Hold.Unbounded || er.Hold.Duration != 15*time.Second || !strings.Contains(er.Hold.BoundBy, "Envoy's default route timeout") {
		t.Errorf("hold %+v, want 15s by Envoy's default route timeout", er.Hold)
	}
	want := []string{
		"../../examples/mesh/envoy-routes.yaml:12 no-budget edge-proxy → frontend",
		"../../examples/mesh/backend-service-config.json:5 no-budget frontend → backend",
		"../../examples/mesh/backend-service-config.json:5 no-deadline frontend → backend",
		"../../examples/mesh/model-policy.yaml:5 no-budget backend → model-api",
		"../../examples/mesh/model-policy.yaml:2 no-deadline backend → model-api",
		"../../examples/mesh/model-policy.yaml:4 no-jitter backend → model-api",
	}
	if got := findingKeys(r.Findings); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("findings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestBudgetedMesh: the same mesh with budgets still sends 27 attempts
// while the budgets are full, and 1.2 × 1 × 1.1 = 1.32 once they have
// drained; a failure that lasts must reach 62.5 % of requests to tip it.
func TestBudgetedMesh(t *testing.T) {
	r := analyzeFile(t, filepath.Join(examples, "mesh-budgeted.yaml"), DefaultOptions())
	er := r.Entries[0]
	s := reachOf(t, er, "model-api")
	if s.WorstCase != 27 || !near(s.Sustained, 1.32) {
		t.Errorf("model-api: worst %v, sustained %v; want 27, 1.32", s.WorstCase, s.Sustained)
	}
	if !near(er.PersistentTipping.Exact, 0.625) || er.PersistentTipsAt != "model-api" {
		t.Errorf("persistent tipping %+v at %s, want 62.5%% at model-api", er.PersistentTipping, er.PersistentTipsAt)
	}
	for _, e := range r.Edges {
		want := map[string]float64{"envoy": 1.2, "grpc": 1, "recoil": 1.1}[e.Retry.Kind]
		if !near(e.Sustained, want) {
			t.Errorf("%s (%s): sustained %v, want %v", e.Name(), e.Retry.Kind, e.Sustained, want)
		}
	}
	if len(r.Findings) != 0 {
		t.Errorf("findings %v, want none", findingKeys(r.Findings))
	}
	// 3 × 6 s per try + 100 ms + 300 ms of Envoy's back-off, inside its
	// 20 s route timeout.
	if er.Hold.Duration != 18400*time.Millisecond || !strings.Contains(er.Hold.BoundBy, "envoy-budgeted.yaml:31") {
		t.Errorf("hold %+v, want 18.4s by the per-try timeout at envoy-budgeted.yaml:31", er.Hold)
	}
}

// TestHopMesh: docs/hop-protocol.md's worked example — three hops of three
// attempts under an edge budget of 2 send the leaf 3 attempts, not 27.
func TestHopMesh(t *testing.T) {
	r := analyzeFile(t, filepath.Join(examples, "hop.yaml"), DefaultOptions())
	s := reachOf(t, r.Entries[0], "model-api")
	if s.WorstCase != 27 || s.Bounded != 3 || s.Sustained != 1 {
		t.Errorf("model-api: worst %v, bounded %v, sustained %v; want 27, 3, 1", s.WorstCase, s.Bounded, s.Sustained)
	}
	if b := reachOf(t, r.Entries[0], "b"); b.Bounded != 3 || b.WorstCase != 9 {
		t.Errorf("b: worst %v, bounded %v; want 9, 3", b.WorstCase, b.Bounded)
	}
}

// TestFanout: paths add up — the model is reached directly (3 × 2) and
// through search's hedges (3 × 5 × 2) — and a hedged gRPC method asking
// for 7 attempts is capped at 5.
func TestFanout(t *testing.T) {
	r := analyzeFile(t, "testdata/fanout/mesh.yaml", DefaultOptions())
	er := r.Entries[0]
	for _, tt := range []struct {
		service          string
		paths            int
		worst, sustained float64
	}{{"api", 1, 3, 3}, {"search", 1, 15, 3}, {"model", 2, 36, 6}, {"cache", 1, 3, 3}, {"cache-store", 1, 3, 3}} {
		s := reachOf(t, er, tt.service)
		if s.Paths != tt.paths || s.WorstCase != tt.worst || s.Sustained != tt.sustained {
			t.Errorf("%s: paths %d, worst %v, sustained %v; want %d, %v, %v", tt.service, s.Paths, s.WorstCase, s.Sustained, tt.paths, tt.worst, tt.sustained)
		}
	}
	want := []string{
		"testdata/fanout/api-vs.yaml:11 no-budget gateway → api",
		"testdata/fanout/search.json:5 capped api → search",
	}
	if got := findingKeys(r.Findings); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("findings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if er.Hold.Duration != 30*time.Second || strings.Join(er.Hold.Path, " ") != "gateway api model" {
		t.Errorf("hold %+v, want 30s on gateway api model", er.Hold)
	}
	got := fmt.Sprint(r.Edges[1].Retry.Attempts, r.Edges[1].Retry.Capped, r.Edges[1].Retry.Asked, r.Edges[1].Retry.Hedged, r.Edges[1].Retry.HedgeDelay)
	if got != "5 true 7 true 500ms" {
		t.Errorf("hedged edge: %s, want 5 true 7 true 500ms", got)
	}
}

// TestHoldUnbounded: a leaf with no latency and no timeout on the way can
// hold its caller forever, and the audit says which.
func TestHoldUnbounded(t *testing.T) {
	files := map[string]string{
		"p.yaml": "max_attempts: 2\n",
	}
	m, err := Parse("m.yaml", []byte("services: [a, b]\nentries: [a]\nedges:\n  - {from: a, to: b, kind: recoil, config: p.yaml}\n"), mapOpener(files))
	if err != nil {
		t.Fatal(err)
	}
	r, err := Analyze(m, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	h := r.Entries[0].Hold
	if !h.Unbounded || !strings.Contains(h.Why, "b calls nothing and has no latency") {
		t.Errorf("hold %+v, want unbounded at b", h)
	}
	if got := findingKeys(r.Findings); len(got) != 1 || got[0] != "p.yaml:1 no-deadline a → b" {
		t.Errorf("findings %v, want the missing deadline at p.yaml:1", got)
	}
}

func mapOpener(files map[string]string) Opener {
	return func(name string) ([]byte, error) {
		if s, ok := files[name]; ok {
			return []byte(s), nil
		}
		return nil, &os.PathError{Op: "open", Path: name, Err: os.ErrNotExist}
	}
}

// TestAnalyzeOptions: options out of range are refused.
func TestAnalyzeOptions(t *testing.T) {
	m, err := Load(filepath.Join(examples, "mesh.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range []Options{
		{FailureRate: -0.1, Headroom: 1.2, Step: 0.005},
		{FailureRate: math.NaN(), Headroom: 1.2, Step: 0.005},
		{FailureRate: 0.1, Headroom: 0.9, Step: 0.005},
		{FailureRate: 0.1, Headroom: 1.2, Step: 0},
		{},
	} {
		if _, err := Analyze(m, o); !errors.Is(err, ErrOptions) {
			t.Errorf("Analyze(%+v) = %v, want ErrOptions", o, err)
		}
	}
}

// TestColumns: entry points at the left, leaves at the right, a service
// in the column of its longest path.
func TestColumns(t *testing.T) {
	m, err := Load("testdata/fanout/mesh.yaml")
	if err != nil {
		t.Fatal(err)
	}
	got := fmt.Sprint(m.Columns())
	if want := "[[gateway] [api] [search cache] [model cache-store]]"; got != want {
		t.Errorf("Columns() = %s, want %s", got, want)
	}
}

// TestHoldWithoutEnvoyTimeouts: docs/audit.md's figure — the shipped mesh
// with the route's timeout turned off and no per-try timeout holds its
// caller 3 × (3 × (3 × 30 s + 2 × 61 s) + 0.3 s) + 0.1 s = 31m49s, bound only
// by the model API's latency: a Retry-After honoured up to 60 s, and the
// tenth more (at most a second) recoil adds to it.
func TestHoldWithoutEnvoyTimeouts(t *testing.T) {
	open := func(name string) ([]byte, error) {
		b, err := os.ReadFile(filepath.Join(examples, name))
		if name == "envoy-routes.yaml" {
			s := strings.Replace(string(b), "          cluster: frontend\n", "          cluster: frontend\n          timeout: 0s\n", 1)
			s = strings.Replace(s, "            per_try_timeout: 5s\n", "", 1)
			b = []byte(s)
		}
		return b, err
	}
	data, err := os.ReadFile(filepath.Join(examples, "mesh.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	m, err := Parse("mesh.yaml", data, open)
	if err != nil {
		t.Fatal(err)
	}
	r, err := Analyze(m, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	h := r.Entries[0].Hold
	if h.Unbounded || h.Duration != 31*time.Minute+49*time.Second || h.BoundBy != "model-api's latency, 30s (mesh.yaml:12)" {
		t.Errorf("hold %+v, want 31m49s by model-api's latency", h)
	}
	if got := findingKeys(r.Findings)[1]; got != "envoy-routes.yaml:11 no-deadline edge-proxy → frontend" {
		t.Errorf("second finding %q, want the route's timeout turned off", got)
	}
}

// TestOverflow: a chain long and wide enough to overflow a float64 is an
// error, not an infinity that -json cannot write.
func TestOverflow(t *testing.T) {
	var mesh strings.Builder
	mesh.WriteString("services: [")
	for i := range 110 {
		fmt.Fprintf(&mesh, "s%d, ", i)
	}
	mesh.WriteString("s110]\nentries: [s0]\nedges:\n")
	for i := range 110 {
		fmt.Fprintf(&mesh, "  - {from: s%d, to: s%d, kind: istio, config: vs.yaml}\n", i, i+1)
	}
	m, err := Parse("m.yaml", []byte(mesh.String()), mapOpener(map[string]string{"vs.yaml": "spec:\n  http:\n    - retries: {attempts: 1000}\n"}))
	if err != nil {
		t.Fatal(err)
	}
	_, err = Analyze(m, DefaultOptions())
	if err == nil || !strings.Contains(err.Error(), "overflow a float64") {
		t.Errorf("Analyze = %v, want an overflow error", err)
	}
}

// TestManyPaths: a ladder of diamonds has 2^n paths; past MaxPaths the
// audit says so rather than run for ever.
func TestManyPaths(t *testing.T) {
	ladder := func(n int) string {
		var b strings.Builder
		b.WriteString("services: [s0")
		for i := 1; i <= n; i++ {
			fmt.Fprintf(&b, ", l%d, r%d, s%d", i, i, i)
		}
		b.WriteString("]\nentries: [s0]\nedges:\n")
		for i := 1; i <= n; i++ {
			for _, side := range []string{"l", "r"} {
				fmt.Fprintf(&b, "  - {from: s%d, to: %s%d, kind: none}\n  - {from: %s%d, to: s%d, kind: none}\n", i-1, side, i, side, i, i)
			}
		}
		return b.String()
	}
	// Paths from s0: 2^(i+1) at level i, 2^(n+2) − 4 in all.
	m, err := Parse("m.yaml", []byte(ladder(9)), mapOpener(nil))
	if err != nil {
		t.Fatal(err)
	}
	r, err := Analyze(m, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	if s := reachOf(t, r.Entries[0], "s9"); s.Paths != 512 || s.WorstCase != 512 {
		t.Errorf("s9: %d paths, worst case %v; want 512 of one attempt each", s.Paths, s.WorstCase)
	}
	m, err = Parse("m.yaml", []byte(ladder(12)), mapOpener(nil))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Analyze(m, DefaultOptions()); err == nil || !strings.Contains(err.Error(), "more than 10000 paths from entry s0 to the services it reaches") {
		t.Errorf("Analyze = %v, want too many paths", err)
	}
}
