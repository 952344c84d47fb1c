package load

import (
	"context"
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
	"github.com/recoil-go/recoil/hop"
	"github.com/recoil-go/recoil/recoilhttp"
	"github.com/recoil-go/recoil/tools/policyspec"
)

func TestPresets(t *testing.T) {
	tests := []struct {
		name        string
		maxAttempts int
		backoff     backoff.Schedule
		everything  bool
		noBudget    bool
		breaker     bool
		edge        int
		overload    backoff.Schedule // nil: the same as backoff
	}{
		{PresetImmediate, 1000, backoff.Constant(20 * time.Millisecond), true, true, false, 999, nil},
		{PresetWrapper, 5, backoff.Exponential{Base: time.Second}, true, true, false, 4, nil},
		{PresetExponential, 8, backoff.Exponential{Base: 60 * time.Millisecond, Max: 10 * time.Second}, false, true, false, 7, nil},
		{PresetFullJitter, 8, backoff.FullJitter{Base: 60 * time.Millisecond, Max: 10 * time.Second}, false, true, false, 7, nil},
		{PresetDefault, 0, nil, false, false, true, 2, nil},
		{PresetInteractive, 2, backoff.FullJitter{Base: 50 * time.Millisecond, Max: 500 * time.Millisecond}, false, false, false, 1,
			backoff.FullJitter{Base: 250 * time.Millisecond, Max: time.Second}},
		{PresetBackground, 6, backoff.FullJitter{Base: time.Second, Max: time.Minute}, false, false, false, 5,
			backoff.FullJitter{Base: 5 * time.Second, Max: 5 * time.Minute}},
	}
	if len(tests) != len(policyspec.Presets()) {
		t.Errorf("%d presets tested, %d listed", len(tests), len(policyspec.Presets()))
	}
	for _, tt := range tests {
		p, err := Preset(tt.name)
		if err != nil {
			t.Fatal(err)
		}
		rp := p.Policy
		if tt.overload == nil {
			tt.overload = tt.backoff
		}
		if p.Name != tt.name || p.About != policyspec.PresetAbout(tt.name) || rp.MaxAttempts != tt.maxAttempts || rp.Backoff != tt.backoff || rp.OverloadBackoff != tt.overload ||
			(rp.Classify != nil) != tt.everything || (rp.Budget == recoil.NoBudget) != tt.noBudget || (rp.Breaker != nil) != tt.breaker {
			t.Errorf("Preset(%q) = %+v, policy %+v", tt.name, p, rp)
		}
		// Fresh state on every call: two runs never share a breaker.
		q, _ := Preset(tt.name)
		if q.Policy == rp {
			t.Errorf("Preset(%q) returned the same *recoil.Policy twice", tt.name)
		}
		// The edge budget is the Transport's rule (hop.EdgeBudget): the
		// policy's own retries unless the spec sets one.
		tr := p.Transport(http.DefaultTransport)
		if edge := hop.EdgeBudget(tr.EdgeBudget, tr.Policy.MaxRetries()); !tr.Hop || edge != tt.edge || tr.Classify != nil {
			t.Errorf("Preset(%q).Transport: hop %v, edge budget %d (want %d), HTTP classify set %v", tt.name, tr.Hop, edge, tt.edge, tr.Classify != nil)
		}
	}
	if _, err := Preset("hurried"); !errors.Is(err, policyspec.ErrUnknownPreset) {
		t.Errorf("Preset(hurried) = %v, want policyspec.ErrUnknownPreset", err)
	}
	if _, err := Preset("hurried"); err == nil || !strings.HasPrefix(err.Error(), `load: unknown preset "hurried" (want one of immediate, wrapper,`) {
		t.Errorf("Preset(hurried) = %v, want it to name the presets", err)
	}
}

// TestClassifyModes: the classify modes reach the Transport through the
// policy's Classify, which sees every HTTP failure as its error.
func TestClassifyModes(t *testing.T) {
	tests := []struct {
		mode string
		err  error
		want recoil.Class
	}{
		{policyspec.ClassifyRetryEverything, &recoilhttp.StatusError{StatusCode: 400}, recoil.ClassTransient},
		{policyspec.ClassifyRetryEverything, &recoilhttp.StatusError{StatusCode: 529}, recoil.ClassTransient},
		{policyspec.ClassifyRetryEverything, errors.New("connection refused"), recoil.ClassTransient},
		{policyspec.ClassifyRetryEverything, context.Canceled, recoil.ClassCanceled},
		{policyspec.ClassifyTimeouts, &recoilhttp.StatusError{StatusCode: 503}, recoil.ClassPermanent},
		{policyspec.ClassifyTimeouts, context.DeadlineExceeded, recoil.ClassUnknown}, // the Transport's rules: a timeout
	}
	for _, tt := range tests {
		p, err := ParsePolicy("p.yaml", []byte("classify: "+tt.mode+"\n"))
		if err != nil {
			t.Fatal(err)
		}
		if got := p.Policy.Classify(tt.err).Class; got != tt.want {
			t.Errorf("classify %s on %v = %v, want %v", tt.mode, tt.err, got, tt.want)
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
			return rp.MaxAttempts == 0 && rp.Backoff == nil && rp.OverloadBackoff == nil && rp.Budget == nil && rp.Breaker == nil && rp.Classify == nil
		}},
		// As in recoil.Policy, and in scenarios: the overload schedule is
		// recoil's own unless written.
		{"backoff leaves overload_backoff to recoil", "backoff: {kind: constant, base: 5ms}",
			func(p Policy) bool {
				return p.Policy.Backoff == backoff.Constant(5*time.Millisecond) && p.Policy.OverloadBackoff == nil
			}},
		{"budget none", "budget: none", func(p Policy) bool { return p.Policy.Budget == recoil.NoBudget }},
		{"budget default", "preset: immediate\nbudget: default", func(p Policy) bool { return p.Policy.Budget == nil }},
		{"every budget kind", "budget: {kind: quota, capacity: 10}", func(p Policy) bool { _, ok := p.Policy.Budget.(*budget.Quota); return ok }},
		{"breaker none", "preset: default\nbreaker: none", func(p Policy) bool { return p.Policy.Breaker == nil }},
		{"breaker default", "breaker: default", func(p Policy) bool { return p.Policy.Breaker != nil }},
		{"retry everything", "classify: retry-everything", func(p Policy) bool { return p.Policy.Classify != nil }},
		{"preset after other fields", "max_attempts: 2\npreset: wrapper",
			func(p Policy) bool { return p.Policy.MaxAttempts == 2 && p.Policy.Classify != nil }},
		{"kinds", "backoff: {kind: decorrelated, base: 1ms, max: 1s}\noverload_backoff: {kind: equal-jitter, base: 2ms}",
			func(p Policy) bool {
				return p.Policy.Backoff == backoff.Decorrelated{Base: time.Millisecond, Max: time.Second} &&
					p.Policy.OverloadBackoff == backoff.EqualJitter{Base: 2 * time.Millisecond}
			}},
		{"none", "backoff: none", func(p Policy) bool { return p.Policy.Backoff == backoff.None{} }},
		{"alias", "backoff: &b {kind: constant, base: 1ms}\noverload_backoff: *b",
			func(p Policy) bool { return p.Policy.OverloadBackoff == backoff.Constant(time.Millisecond) }},
		{"hop sets the edge budget", "hop: 1\nmax_attempts: 5", func(p Policy) bool { return p.Transport(nil).EdgeBudget == 1 }},
		{"limit", "limit: 4", func(p Policy) bool { return p.Policy.Limiter != nil }},
		{"idle timeout", "idle_timeout: 3s", func(p Policy) bool { return p.Transport(nil).IdleTimeout == 3*time.Second }},
	}
	for _, tt := range tests {
		p, err := ParsePolicy("p.yaml", []byte(tt.yaml))
		if err != nil || !tt.check(p) || p.About != "from p.yaml" {
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
		{"bad count", "max_attempts: -1\n", 1, "max_attempts", "must not be negative"},
		{"bad duration", "timeout: soon\n", 1, "timeout", `want a duration such as 200ms or 1m30s, got "soon"`},
		{"negative duration", "timeout: -1s\n", 1, "timeout", "negative"},
		{"bad kind", "backoff:\n  kind: shaken\n", 2, "backoff.kind", `"shaken" is not a backoff kind`},
		{"backoff field", "backoff:\n  kind: constant\n  bsae: 1s\n", 3, "backoff.bsae", "unknown field"},
		{"backoff not a kind", "backoff: fast\n", 1, "backoff.kind", `"fast" is not a backoff kind`},
		{"budget word", "budget: some\n", 1, "budget.kind", `"some" is not a budget kind`},
		{"budget field", "budget:\n  tokns: 3\n", 2, "budget.tokns", "unknown field"},
		{"breaker field", "breaker:\n  open: 1s\n  opn: 2s\n", 3, "breaker.opn", "unknown field"},
		{"twice", "timeout: 1s\ntimeout: 2s\n", 2, "timeout", "given twice (first on line 1)"},
		{"not a mapping", "- 1\n", 1, "", "want a mapping"},
		{"syntax", "backoff: [1s\n", 1, "", "did not find expected"},
		// The spellings load policy files had before the one language.
		{"retry_everything", "retry_everything: true\n", 1, "retry_everything", "now spelled classify: retry-everything"},
		{"a budget of another kind", "budget: {kind: ratio, max_tokens: 3}\n", 1, "budget.max_tokens", "does not apply to a budget of kind ratio"},
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
}

func TestNewPolicyChecks(t *testing.T) {
	if _, err := NewPolicy(&policyspec.Spec{Limit: -1}); err == nil || err.Error() != "limit: must not be negative (0 means no cap)" {
		t.Errorf("NewPolicy(limit -1) = %v, want the spec's error", err)
	}
	// The gateways' retries per target, which recoil does not run, are
	// refused on their line rather than accepted and run otherwise.
	for _, tt := range []struct{ src, want string }{
		{"name: p\nfallback:\n  targets: [a, b]\n  retries: per-target\n", "p.yaml:4: fallback.retries: per-target is the LLM gateways' way, which recoil does not run: the simulator compares it (recoil sim); leave retries out for recoil's one bound"},
	} {
		if _, err := ParsePolicy("p.yaml", []byte(tt.src)); err == nil || err.Error() != tt.want {
			t.Errorf("ParsePolicy(%q) = %v, want %s", tt.src, err, tt.want)
		}
	}
}

func FuzzParsePolicy(f *testing.F) {
	b, err := os.ReadFile(filepath.Join("testdata", "patient.yaml"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	f.Add([]byte("preset: wrapper\nclassify: timeouts\nhop: 2\nlimit: 3\nbudget: {kind: adaptive, k: 1.5}\n"))
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
