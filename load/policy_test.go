package load

import (
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/recoil-go/recoil"
	"github.com/recoil-go/recoil/backoff"
	"github.com/recoil-go/recoil/breaker"
	"github.com/recoil-go/recoil/budget"
)

func TestPresets(t *testing.T) {
	tests := []struct {
		name        string
		maxAttempts int
		backoff     backoff.Schedule
		everything  bool
		noBudget    bool
		breaker     bool
	}{
		{PresetImmediate, 1000, backoff.Constant(20 * time.Millisecond), true, true, false},
		{PresetSeed000, 5, backoff.Exponential{Base: time.Second}, true, true, false},
		{PresetExponential, 8, backoff.Exponential{Base: 60 * time.Millisecond, Max: 10 * time.Second}, false, true, false},
		{PresetFullJitter, 8, backoff.FullJitter{Base: 60 * time.Millisecond, Max: 10 * time.Second}, false, true, false},
		{PresetDefault, 0, nil, false, false, true},
	}
	for _, tt := range tests {
		p, err := Preset(tt.name)
		if err != nil {
			t.Fatal(err)
		}
		rp := p.Policy
		if p.Name != tt.name || rp.MaxAttempts != tt.maxAttempts || rp.Backoff != tt.backoff || rp.OverloadBackoff != tt.backoff ||
			p.RetryEverything != tt.everything || (rp.Budget == recoil.NoBudget) != tt.noBudget || (rp.Breaker != nil) != tt.breaker {
			t.Errorf("Preset(%q) = %+v, policy %+v", tt.name, p, rp)
		}
		// Fresh state on every call: two runs never share a breaker.
		q, _ := Preset(tt.name)
		if q.Policy == rp {
			t.Errorf("Preset(%q) returned the same *recoil.Policy twice", tt.name)
		}
		tr := p.Transport(http.DefaultTransport)
		if !tr.Hop || (tr.Classify != nil) != tt.everything {
			t.Errorf("Preset(%q).Transport: hop %v, classify set %v", tt.name, tr.Hop, tr.Classify != nil)
		}
	}
	if _, err := Preset("hurried"); !errors.Is(err, ErrUnknownPreset) {
		t.Errorf("Preset(hurried) = %v, want ErrUnknownPreset", err)
	}
}

func TestRetryEverything(t *testing.T) {
	tests := []struct {
		status int
		err    error
		want   recoil.Class
	}{
		{200, nil, recoil.ClassUnknown},
		{400, nil, recoil.ClassTransient},
		{529, nil, recoil.ClassTransient},
		{0, errors.New("connection refused"), recoil.ClassTransient},
	}
	for _, tt := range tests {
		var resp *http.Response
		if tt.err == nil {
			resp = &http.Response{StatusCode: tt.status}
		}
		if got := retryEverything(nil, resp, tt.err).Class; got != tt.want {
			t.Errorf("retryEverything(%d, %v) = %v, want %v", tt.status, tt.err, got, tt.want)
		}
	}
}

func TestLoadPolicy(t *testing.T) {
	p, err := LoadPolicy(filepath.Join("testdata", "patient.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	rp := p.Policy
	if p.Name != "patient" || rp.MaxAttempts != 6 || rp.MaxServerWait != 30*time.Second || rp.Timeout != 20*time.Second ||
		p.Policy.AttemptTimeout != 2*time.Second || p.IdleTimeout != 5*time.Second {
		t.Errorf("LoadPolicy = %+v, policy %+v", p, rp)
	}
	if want := (backoff.FullJitter{Base: 100 * time.Millisecond, Max: 5 * time.Second}); rp.Backoff != want {
		t.Errorf("backoff %v, want %v", rp.Backoff, want)
	}
	if want := (backoff.Exponential{Base: time.Second, Multiplier: 1.5}); rp.OverloadBackoff != want {
		t.Errorf("overload backoff %v, want %v", rp.OverloadBackoff, want)
	}
	if _, ok := rp.Budget.(*budget.TokenBucket); !ok {
		t.Errorf("budget %T, want a *budget.TokenBucket", rp.Budget)
	}
	if _, ok := rp.Breaker.(*breaker.Breaker); !ok {
		t.Errorf("breaker %T, want a *breaker.Breaker", rp.Breaker)
	}
	if _, err := LoadPolicy(filepath.Join(t.TempDir(), "none.yaml")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("LoadPolicy(missing) = %v, want os.ErrNotExist", err)
	}
}

func TestParsePolicyVariants(t *testing.T) {
	tests := []struct {
		name  string
		yaml  string
		check func(Policy) bool
	}{
		{"empty is the recoil default", "", func(p Policy) bool {
			rp := p.Policy
			return rp.MaxAttempts == 0 && rp.Backoff == nil && rp.OverloadBackoff == nil && rp.Budget == nil && rp.Breaker == nil && !p.RetryEverything
		}},
		{"backoff sets overload too", "backoff: {kind: constant, base: 5ms}",
			func(p Policy) bool { return p.Policy.OverloadBackoff == backoff.Constant(5*time.Millisecond) }},
		{"budget none", "budget: none", func(p Policy) bool { return p.Policy.Budget == recoil.NoBudget }},
		{"budget default", "preset: immediate\nbudget: default", func(p Policy) bool { return p.Policy.Budget == nil }},
		{"breaker none", "preset: default\nbreaker: none", func(p Policy) bool { return p.Policy.Breaker == nil }},
		{"breaker default", "breaker: default", func(p Policy) bool { return p.Policy.Breaker != nil }},
		{"retry everything", "retry_everything: true", func(p Policy) bool { return p.RetryEverything }},
		{"preset after other fields", "max_attempts: 2\npreset: seed000",
			func(p Policy) bool { return p.Policy.MaxAttempts == 2 && p.RetryEverything }},
		{"kinds", "backoff: {kind: decorrelated, base: 1ms, max: 1s}\noverload_backoff: {kind: equal-jitter, base: 2ms}",
			func(p Policy) bool {
				return p.Policy.Backoff == backoff.Decorrelated{Base: time.Millisecond, Max: time.Second} &&
					p.Policy.OverloadBackoff == backoff.EqualJitter{Base: 2 * time.Millisecond}
			}},
		{"none", "backoff: {kind: none}", func(p Policy) bool { return p.Policy.Backoff == backoff.None{} }},
		{"alias", "backoff: &b {kind: constant, base: 1ms}\noverload_backoff: *b",
			func(p Policy) bool { return p.Policy.OverloadBackoff == backoff.Constant(time.Millisecond) }},
	}
	for _, tt := range tests {
		p, err := ParsePolicy("p.yaml", []byte(tt.yaml))
		if err != nil || !tt.check(p) {
			t.Errorf("%s: ParsePolicy = %+v (policy %+v), %v", tt.name, p, p.Policy, err)
		}
	}
}

func TestParsePolicyErrorsNameTheLine(t *testing.T) {
	tests := []struct {
		name  string
		yaml  string
		line  int
		field string
		msg   string
	}{
		{"unknown field", "max_attempts: 3\nmax_attemps: 4\n", 2, "max_attemps", `unknown field "max_attemps"`},
		{"unknown preset", "preset: hurried\n", 1, "preset", "unknown preset"},
		{"bad count", "max_attempts: 0\n", 1, "max_attempts", "1 or more"},
		{"bad duration", "timeout: soon\n", 1, "timeout", `"soon" is not a duration`},
		{"negative duration", "timeout: -1s\n", 1, "timeout", "negative"},
		{"bad kind", "backoff:\n  kind: shaken\n", 2, "backoff.kind", `"shaken" is not a backoff kind`},
		{"backoff field", "backoff:\n  kind: constant\n  bsae: 1s\n", 3, "backoff.bsae", "unknown field"},
		{"backoff not a mapping", "backoff: fast\n", 1, "backoff", "want a mapping"},
		{"budget word", "budget: some\n", 1, "budget", "want none, default"},
		{"budget field", "budget:\n  tokens: 3\n", 2, "budget.tokens", "unknown field"},
		{"breaker field", "breaker:\n  open: 1s\n  opn: 2s\n", 3, "breaker.opn", "unknown field"},
		{"bool", "retry_everything: perhaps\n", 1, "retry_everything", "not true or false"},
		{"twice", "timeout: 1s\ntimeout: 2s\n", 2, "timeout", "given twice (first on line 1)"},
		{"not a mapping", "- 1\n", 1, "", "a mapping"},
	}
	for _, tt := range tests {
		_, err := ParsePolicy("p.yaml", []byte(tt.yaml))
		var pe *PolicyError
		if !errors.As(err, &pe) {
			t.Errorf("%s: %v, want a *PolicyError", tt.name, err)
			continue
		}
		if pe.Line != tt.line || pe.Field != tt.field || !strings.Contains(err.Error(), tt.msg) || !strings.HasPrefix(err.Error(), "p.yaml:") {
			t.Errorf("%s: %q (line %d, field %q); want line %d, field %q, saying %q", tt.name, err, pe.Line, pe.Field, tt.line, tt.field, tt.msg)
		}
	}
	if _, err := ParsePolicy("p.yaml", []byte("backoff: [1s\n")); err == nil || !strings.Contains(err.Error(), "line") {
		t.Errorf("a syntax error: %v, want one naming the line", err)
	}
}

func FuzzParsePolicy(f *testing.F) {
	b, err := os.ReadFile(filepath.Join("testdata", "patient.yaml"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := ParsePolicy("f.yaml", data)
		if err != nil {
			var pe *PolicyError
			if !errors.As(err, &pe) {
				t.Fatalf("error %v is not a *PolicyError", err)
			}
			return
		}
		if p.Policy == nil {
			t.Fatal("a nil *recoil.Policy without an error")
		}
		p.Transport(nil)
	})
}
