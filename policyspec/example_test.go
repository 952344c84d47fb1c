package policyspec_test

import (
	"fmt"

	"github.com/recoil-go/recoil/policyspec"
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
	// default      0    the recoil default: classified, 3 attempts, full jitter, A6 budget, breaker (1 s open)
}
