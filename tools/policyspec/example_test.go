package policyspec_test

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/recoil-go/recoil/tools/policyspec"
)

// A policy file starts from a preset, or from recoil's default, and says
// what differs; the result makes a fresh recoil.Policy each time.
func Example() {
	s, err := policyspec.Parse("careful.yaml", []byte(`
name: careful
preset: full-jitter
max_attempts: 4
backoff: {kind: full-jitter, base: 100ms, max: 5s}
budget: {kind: token-bucket, max_tokens: 20, token_ratio: 0.05}
breaker: {consecutive_failures: 3, open: 2s}
`))
	if err != nil {
		fmt.Println(err)
		return
	}
	p := s.Policy(nil)
	fmt.Println(s.Name, p.MaxAttempts, p.Backoff, p.OverloadBackoff)
	fmt.Printf("%T %T\n", p.Budget, p.Breaker)

	// A mistake is reported with the file, the line and the field; so is a
	// spelling from before the one language.
	_, err = policyspec.Parse("bad.yaml", []byte("max_attempts: 3\nbackoff:\n  kind: shaken\n"))
	fmt.Println(err)
	_, err = policyspec.Parse("old.yaml", []byte("attempts: 3\n"))
	fmt.Println(err)
	// Output:
	// careful 4 {100ms 0 5s} {60ms 0 10s}
	// *budget.TokenBucket *breaker.Breaker
	// bad.yaml:3: backoff.kind: "shaken" is not a backoff kind (want one of constant, decorrelated, equal-jitter, exponential, full-jitter, none, proportional)
	// old.yaml:1: attempts: "attempts" is now spelled max_attempts (see docs/policy-language.md)
}

func ExamplePreset() {
	for _, name := range policyspec.Presets() {
		s, err := policyspec.Preset(name)
		if err != nil {
			panic(err)
		}
		fmt.Printf("%-12s %-4d %s\n", s.Name, s.MaxAttempts, policyspec.PresetAbout(name))
	}
	// Output:
	// immediate    1000 every 20 ms, whatever failed, up to 1000 attempts: the retry written in a hurry
	// wrapper      5    5 attempts, 1 s doubling, anything that is not a 2xx: the wrapper most services ship
	// exponential  8    60 ms doubling, no jitter, up to 8 attempts
	// full-jitter  8    full jitter from 60 ms doubling, up to 8 attempts
	// default      0    the recoil default: classified, 3 attempts, full jitter, share budget, breaker (1 s open)
	// interactive  2    recoil.Interactive(): 2 attempts, waits under 1 s, a 10 s bound, Retry-After up to 2 s
	// background   6    recoil.Background(): 6 attempts, waits from 1 s to a minute, half the default share
}

// A service keeps its policy in a file beside its configuration; a file
// that cannot be read is the os error, one with a mistake an *Error.
func ExampleLoad() {
	dir, err := os.MkdirTemp("", "policy")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "payments.yaml")
	if err := os.WriteFile(path, []byte("preset: default\nmax_attempts: 2\ntimeout: 10s\n"), 0o600); err != nil {
		panic(err)
	}
	s, err := policyspec.Load(path)
	if err != nil {
		fmt.Println(err)
		return
	}
	p := s.Policy(nil)
	fmt.Println(p.MaxAttempts, p.Timeout)

	_, err = policyspec.Load(filepath.Join(dir, "missing.yaml"))
	fmt.Println(errors.Is(err, fs.ErrNotExist))
	// Output:
	// 2 10s
	// true
}

// A larger file can hold a policy as one of its parts — a scenario's
// policies, a service's settings — and hand that node to Decode with the
// path its errors should name.
func ExampleDecode() {
	src := []byte(`
service: payments
retry:
  max_attempts: 4
  backoff: {kind: full-jitter, base: 50ms, max: 2s}
`)
	var doc yaml.Node
	if err := yaml.Unmarshal(src, &doc); err != nil {
		panic(err)
	}
	retry := doc.Content[0].Content[3] // the value of "retry"
	s, err := policyspec.Decode("service.yaml", retry, "retry")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(s.Policy(nil).MaxAttempts, s.Policy(nil).Backoff)

	var bad yaml.Node
	if err := yaml.Unmarshal([]byte("retry:\n  max_attempts: -1\n"), &bad); err != nil {
		panic(err)
	}
	_, err = policyspec.Decode("service.yaml", bad.Content[0].Content[1], "retry")
	fmt.Println(err)
	// Output:
	// 4 {50ms 0 2s}
	// service.yaml:2: retry.max_attempts: must not be negative (0 means recoil's default, 3)
}

// A tool that reports policy mistakes itself (an editor, a CI check)
// reads the parts of *Error: where the mistake is, and what it is. An
// empty file is no mistake: it is recoil's default policy.
func ExampleParse() {
	_, err := policyspec.Parse("retry.yaml", []byte("max_attempts: 3\ntimeout: soon\n"))
	var pe *policyspec.Error
	if errors.As(err, &pe) {
		fmt.Printf("%s line %d, field %s: %v\n", pe.File, pe.Line, pe.Field, pe.Err)
	}

	s, err := policyspec.Parse("empty.yaml", nil)
	fmt.Println(s.MaxAttempts, s.Backoff == nil, err)
	// Output:
	// retry.yaml line 2, field timeout: want a duration such as 200ms or 1m30s, got "soon"
	// 0 true <nil>
}

// A command-line flag's help can list the presets, from the hastiest retry
// loop to recoil's default.
func ExamplePresets() {
	fmt.Println("-policy: one of", strings.Join(policyspec.Presets(), ", "), "or a file")
	// Output: -policy: one of immediate, wrapper, exponential, full-jitter, default, interactive, background or a file
}

// PresetAbout is "" for a name that is not a preset, so it doubles as a
// check on user input.
func ExamplePresetAbout() {
	for _, name := range []string{"wrapper", "jittered"} {
		if about := policyspec.PresetAbout(name); about != "" {
			fmt.Println(name+":", about)
		} else {
			fmt.Println(name + ": not a preset")
		}
	}
	// Output:
	// wrapper: 5 attempts, 1 s doubling, anything that is not a 2xx: the wrapper most services ship
	// jittered: not a preset
}

// One spec, built in Go, for several dependencies: each Policy call makes a
// fresh recoil.Policy with a budget and breaker of its own, so an outage of
// one dependency does not spend the others' retries.
func ExampleSpec_Policy() {
	s := policyspec.Spec{
		MaxAttempts: 4,
		Budget:      &policyspec.Budget{Kind: policyspec.BudgetTokenBucket, MaxTokens: 20},
		Breaker:     &policyspec.Breaker{ConsecutiveFailures: 5},
	}
	if err := s.Validate(); err != nil {
		panic(err)
	}
	search, payments := s.Policy(nil), s.Policy(nil)
	fmt.Println(search.MaxAttempts, payments.MaxAttempts)
	fmt.Println(search.Budget != payments.Budget, search.Breaker != payments.Breaker)
	// Output:
	// 4 4
	// true true
}
