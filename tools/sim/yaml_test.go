package sim

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/recoil-go/recoil/tools/policyspec"
	"github.com/recoil-go/recoil/tools/scenarios"
)

// A valid scenario the broken ones below are made from; every line is
// numbered in the comments so the wanted line numbers can be checked.
const okScenario = `name: ok
duration: 1m
policies:
  - name: p
services:
  - name: s
    workers: 2
    service: 10ms
clients:
  - name: c
    target: s
    rate: 10/s
`

func TestParseOK(t *testing.T) {
	s, err := Parse("ok.yaml", []byte(okScenario))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := s.Clients[0].Rate, Rate(10); got != want {
		t.Errorf("rate = %v, want %v", got, want)
	}
	if got, want := s.Services[0].Service, Constant(10*time.Millisecond); got.Kind != want.Kind || got.Mean != want.Mean {
		t.Errorf("service = %+v, want %+v", got, want)
	}
	if got, want := s.Services[0].Pos.Lines["workers"], 7; got != want {
		t.Errorf("line of services[s].workers = %d, want %d", got, want)
	}
}

// TestParsePolicies: a scenario's policies are written in the policy
// language (package policyspec), presets included, and a sweep can vary a
// policy's field like any other.
func TestParsePolicies(t *testing.T) {
	src := `name: policies
duration: 1m
sweep:
  path: policies[careful].max_attempts
  values: [2, 4]
policies:
  - name: hurried
    preset: immediate
  - name: careful
    max_attempts: 3
    backoff: {kind: equal-jitter, base: 10ms, max: 1s}
    budget: {kind: quota, capacity: 50}
services:
  - name: s
    service: 10ms
  - name: front
    calls: s
    policy: none
clients:
  - name: c
    target: front
    rate: 10/s
`
	s, err := Parse("p.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	hurried, careful := s.Policies[0], s.Policies[1]
	if hurried.Name != "hurried" || hurried.MaxAttempts != 1000 || hurried.Classify != policyspec.ClassifyRetryEverything {
		t.Errorf("preset immediate = %+v", hurried)
	}
	want := policyspec.Backoff{Kind: policyspec.BackoffEqualJitter, Base: 10 * time.Millisecond, Max: time.Second}
	if b := careful.Backoff; b == nil || b.Kind != want.Kind || b.Base != want.Base || b.Max != want.Max {
		t.Errorf("careful's backoff = %+v, want %+v", b, want)
	}
	if got := careful.Pos.Lines["max_attempts"]; got != 10 {
		t.Errorf("line of policies[careful].max_attempts = %d, want 10", got)
	}
	if ps := s.Services[1].Policy.Spec; ps == nil || ps.MaxAttempts != 1 || ps.Budget.Kind != policyspec.BudgetNone {
		t.Errorf("policy: none = %+v, want one attempt, no budget", ps)
	}

	// A sweep value a policy does not take names the sweep's line.
	bad := strings.Replace(src, "values: [2, 4]", "values: [2, -1]", 1)
	_, err = Parse("p.yaml", []byte(bad))
	if want := "p.yaml:5: policies[careful].max_attempts: must not be negative (0 means recoil's default, 3) (with policies[careful].max_attempts = -1)"; err == nil || err.Error() != want {
		t.Errorf("Parse(bad sweep) = %v\nwant %s", err, want)
	}
}

// TestParseErrors: a broken scenario file gets an error naming the file,
// the line and the field.
func TestParseErrors(t *testing.T) {
	tests := []struct {
		name      string
		old, new  string // replace old with new in okScenario ("" appends new)
		wantLine  int
		wantField string
		wantMsg   string
	}{
		{"unknown field", "    rate: 10/s\n", "    rate: 10/s\n    colour: red\n", 13, "clients[c].colour", "unknown field"},
		{"misspelt top-level field", "duration: 1m\n", "duraton: 1m\n", 2, "duraton", "unknown field"},
		{"not a number", "workers: 2", "workers: many", 7, "services[s].workers", "want a whole number"},
		{"duration without unit", "duration: 1m", "duration: 60", 2, "duration", "want a duration"},
		{"rate with a bad unit", "rate: 10/s", "rate: 10/fortnight", 12, "clients[c].rate", "unknown unit"},
		{"negative rate", "rate: 10/s", "rate: -3/s", 12, "clients[c].rate", "negative"},
		{"unknown target", "target: s", "target: db", 11, "clients[c].target", `no service named "db"`},
		{"failure out of range", "    service: 10ms\n", "    service: 10ms\n    failure: 1.5\n", 9, "services[s].failure", "probability"},
		{"unknown backoff", "  - name: p\n", "  - name: p\n    backoff: {kind: fibonacci, base: 1s}\n", 5, "policies[p].backoff.kind", `"fibonacci" is not a backoff kind`},
		{"backoff without base", "  - name: p\n", "  - name: p\n    backoff: {kind: full-jitter}\n", 5, "policies[p].backoff.base", "must be positive"},
		{"budget parameter of another kind", "  - name: p\n", "  - name: p\n    budget:\n      kind: ratio\n      max_tokens: 5\n", 7, "policies[p].budget.max_tokens", "does not apply to a budget of kind ratio"},
		{"unknown budget", "  - name: p\n", "  - name: p\n    budget: infinite\n", 5, "policies[p].budget.kind", `"infinite" is not a budget kind`},
		{"unknown classify", "  - name: p\n", "  - name: p\n    classify: maybe\n", 5, "policies[p].classify", `"maybe" is not a classify mode`},
		{"a renamed policy field", "  - name: p\n", "  - name: p\n    attempts: 5\n", 5, "policies[p].attempts", `"attempts" is now spelled max_attempts`},
		{"a renamed backoff kind", "  - name: p\n", "  - name: p\n    backoff:\n      kind: full\n      base: 1s\n", 6, "policies[p].backoff.kind", `"full" is now spelled full-jitter`},
		{"a renamed budget field", "  - name: p\n", "  - name: p\n    budget: {kind: token-bucket, tokens: 4, ratio: 0.5}\n", 5, "policies[p].budget.tokens", `"tokens" is now spelled max_tokens`},
		{"a client's policy", "    rate: 10/s\n", "    rate: 10/s\n    policy:\n      name: mine\n      breaker: {failures: 3}\n", 15, "clients[c].policy.breaker.failures", `"failures" is now spelled consecutive_failures`},
		{"idle timeout", "  - name: p\n", "  - name: p\n    idle_timeout: 5s\n", 5, "policies[p].idle_timeout", "the simulator has no streams"},
		{"unknown preset", "  - name: p\n", "  - name: p\n    preset: hurried\n", 5, "policies[p].preset", `unknown preset "hurried"`},
		{"unknown policy field", "  - name: p\n", "  - name: p\n    retries: 2\n", 5, "policies[p].retries", `unknown field "retries"`},
		{"open and closed", "    rate: 10/s\n", "    rate: 10/s\n    callers: 4\n", 13, "clients[c].callers", "not both"},
		{"neither open nor closed", "    rate: 10/s\n", "", 10, "clients[c].rate", "give a rate"},
		{"compared policy but none listed", "policies:\n  - name: p\n", "", 1, "policies", "none is listed"},
		{"unknown distribution", "service: 10ms", "service: {dist: pareto, mean: 1s}", 8, "services[s].service.dist", `unknown distribution "pareto"`},
		{"distribution field of another kind", "service: 10ms", "service: {dist: exponential, mean: 1s, max: 2s}", 8, "services[s].service.dist", "takes only a mean"},
		{"reject of an unknown endpoint", "    service: 10ms\n", "    service: 10ms\n    reject: [nobody]\n", 9, "services[s].reject", `no client has endpoint "nobody"`},
		{"calls an unknown service", "    service: 10ms\n", "    service: 10ms\n    calls: db\n", 9, "services[s].calls", `no service named "db"`},
		{"calls itself", "    service: 10ms\n", "    service: 10ms\n    calls: s\n", 9, "services[s].calls", "cycle"},
		{"given twice", "    workers: 2\n", "    workers: 2\n    workers: 3\n", 8, "services[s].workers", "given twice"},
		{"list expected", "policies:\n  - name: p\n", "policies: p\n", 3, "policies", "want a list"},
		{"policy reference", "    rate: 10/s\n", "    rate: 10/s\n    policy: sometimes\n", 13, "clients[c].policy", "want compared, none or a policy"},
		{"outage without duration", "    service: 10ms\n", "    service: 10ms\n    outages:\n      - start: 1s\n", 10, "services[s].outages[0].duration", "must be positive"},
		{"outage class", "    service: 10ms\n", "    service: 10ms\n    outages:\n      - {start: 1s, duration: 1s, class: sulking}\n", 10, "services[s].outages[0].class", `unknown class "sulking"`},
		{"sweep of a missing field", "", "sweep:\n  path: services[s].wokers\n  values: [1, 2]\n", 15, "sweep.path", `no field "wokers"`},
		{"sweep of a missing element", "", "sweep:\n  path: services[db].workers\n  values: [1, 2]\n", 15, "sweep.path", `has no element "db"`},
		{"sweep value of the wrong type", "", "sweep:\n  path: services[s].workers\n  values: [1, lots]\n", 15, "services[s].workers", `sweep value "lots"`},
		{"sweep value out of range", "", "sweep:\n  path: services[s].failure\n  values: [0.1, 2]\n", 15, "services[s].failure", "with services[s].failure = 2"},
		{"sweep without values", "", "sweep:\n  path: services[s].workers\n", 14, "sweep.step", "give values"},
		{"syntax error", "    workers: 2\n", "    workers: 2\n     extra: 1\n", 8, "", "mapping values are not allowed"},
		{"a second document", "", "---\nname: again\n", 13, "", "one YAML document"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := okScenario + tt.new
			if tt.old != "" {
				if !strings.Contains(okScenario, tt.old) {
					t.Fatalf("bad test: %q not in the scenario", tt.old)
				}
				src = strings.Replace(okScenario, tt.old, tt.new, 1)
			}
			_, err := Parse("broken.yaml", []byte(src))
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("Parse = %v, want an *Error", err)
			}
			if e.File != "broken.yaml" || e.Line != tt.wantLine || e.Field != tt.wantField || !strings.Contains(e.Err.Error(), tt.wantMsg) {
				t.Errorf("Parse error = %q (file %q, line %d, field %q), want broken.yaml:%d, field %q, containing %q\n%s",
					err, e.File, e.Line, e.Field, tt.wantLine, tt.wantField, tt.wantMsg, numbered(src))
			}
			if !strings.HasPrefix(err.Error(), "broken.yaml:") {
				t.Errorf("error %q does not begin with the file name", err)
			}
		})
	}
}

func numbered(s string) string {
	var b strings.Builder
	for i, l := range strings.Split(strings.TrimSuffix(s, "\n"), "\n") {
		b.WriteString(strings.Repeat(" ", 3-len(itoa(i+1))) + itoa(i+1) + "  " + l + "\n")
	}
	return b.String()
}

func itoa(i int) string {
	if i < 10 {
		return string(rune('0' + i))
	}
	return itoa(i/10) + string(rune('0'+i%10))
}

func TestParseEmpty(t *testing.T) {
	_, err := Parse("empty.yaml", nil)
	var e *Error
	if !errors.As(err, &e) || e.File != "empty.yaml" {
		t.Errorf("Parse(empty) = %v, want an *Error naming the file", err)
	}
}

func TestParseRate(t *testing.T) {
	tests := []struct {
		in   string
		want Rate
	}{
		{"140/min", 140.0 / 60}, {"2.5/s", 2.5}, {"3600/h", 1}, {"7", 7}, {"2000 / min", 2000.0 / 60},
	}
	for _, tt := range tests {
		got, err := ParseRate(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("ParseRate(%q) = %v, %v, want %v", tt.in, got, err, tt.want)
		}
	}
	for _, bad := range []string{"", "fast", "1/fortnight", "-1/s", "NaN"} {
		if _, err := ParseRate(bad); err == nil {
			t.Errorf("ParseRate(%q) succeeded, want an error", bad)
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(okScenario))
	entries, _ := scenarios.FS.ReadDir(".")
	for _, e := range entries {
		data, _ := scenarios.FS.ReadFile(e.Name())
		f.Add(data)
	}
	f.Add([]byte("name: x\nservices: [{name: s}]\nclients: [{name: c, target: s, callers: 1, calls: 1}]\npolicies: [{name: p}]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Parse("fuzz.yaml", data)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("Parse error %v (%T) is not an *Error", err, err)
			}
			return
		}
		if err := s.Validate(); err != nil {
			t.Fatalf("Parse accepted a scenario Validate rejects: %v", err)
		}
	})
}
