package policyspec

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// Preset names, for Preset and for "preset:" in a file.
const (
	// PresetImmediate retries every 20 ms whatever failed, up to 1000
	// attempts, with no budget: the retry loop written in a hurry.
	PresetImmediate = "immediate"
	// PresetWrapper is the retry wrapper most services ship: 5 attempts,
	// waits doubling from 1 s with no jitter, retrying anything that is not
	// a 2xx, with no budget.
	PresetWrapper = "wrapper"
	// PresetExponential waits 60 ms doubling to a 10 s cap, with no jitter,
	// up to 8 attempts, with no budget: what most hand-written loops deploy.
	PresetExponential = "exponential"
	// PresetFullJitter waits a uniform time in [0, 60 ms doubling], capped
	// at 10 s, up to 8 attempts, with no budget (Brooker's full jitter).
	PresetFullJitter = "full-jitter"
	// PresetDefault is recoil's default policy — classification, 3
	// attempts, full jitter, Retry-After honoured, the share budget —
	// plus a circuit breaker with its defaults but a 1 s open period: the
	// 30 s default would keep a sub-second outage's callers out for 30 s.
	PresetDefault = "default"
	// PresetInteractive is recoil.Interactive(): at most one retry, short
	// waits, a 10 s bound on the call, no server-directed wait over 2 s.
	PresetInteractive = "interactive"
	// PresetBackground is recoil.Background(): up to 6 attempts, waits
	// from 1 s to a minute, a budget of half the default share, calls of
	// background priority.
	PresetBackground = "background"
)

// ErrUnknownPreset is returned by Preset for a name that is not a preset.
// Its text has no package prefix: it reads inside a file's error
// ("p.yaml:1: preset: unknown preset ...") and under a caller's own.
var ErrUnknownPreset = errors.New("unknown preset")

var presets = []struct {
	name, about string
	spec        func() Spec
}{
	{PresetImmediate, "every 20 ms, whatever failed, up to 1000 attempts: the retry written in a hurry", func() Spec {
		return Spec{MaxAttempts: 1000, Classify: ClassifyRetryEverything, Budget: &Budget{Kind: BudgetNone},
			Backoff:         &Backoff{Kind: BackoffConstant, Base: 20 * time.Millisecond},
			OverloadBackoff: &Backoff{Kind: BackoffConstant, Base: 20 * time.Millisecond}}
	}},
	{PresetWrapper, "5 attempts, 1 s doubling, anything that is not a 2xx: the wrapper most services ship", func() Spec {
		return Spec{MaxAttempts: 5, Classify: ClassifyRetryEverything, Budget: &Budget{Kind: BudgetNone},
			Backoff:         &Backoff{Kind: BackoffExponential, Base: time.Second},
			OverloadBackoff: &Backoff{Kind: BackoffExponential, Base: time.Second}}
	}},
	{PresetExponential, "60 ms doubling, no jitter, up to 8 attempts", func() Spec {
		return Spec{MaxAttempts: 8, Budget: &Budget{Kind: BudgetNone},
			Backoff:         &Backoff{Kind: BackoffExponential, Base: 60 * time.Millisecond, Max: 10 * time.Second},
			OverloadBackoff: &Backoff{Kind: BackoffExponential, Base: 60 * time.Millisecond, Max: 10 * time.Second}}
	}},
	{PresetFullJitter, "full jitter from 60 ms doubling, up to 8 attempts", func() Spec {
		return Spec{MaxAttempts: 8, Budget: &Budget{Kind: BudgetNone},
			Backoff:         &Backoff{Kind: BackoffFullJitter, Base: 60 * time.Millisecond, Max: 10 * time.Second},
			OverloadBackoff: &Backoff{Kind: BackoffFullJitter, Base: 60 * time.Millisecond, Max: 10 * time.Second}}
	}},
	{PresetDefault, "the recoil default: classified, 3 attempts, full jitter, share budget, breaker (1 s open)", func() Spec {
		return Spec{Breaker: &Breaker{Open: time.Second}}
	}},
	{PresetInteractive, "recoil.Interactive(): 2 attempts, waits under 1 s, a 10 s bound, Retry-After up to 2 s", func() Spec {
		return Spec{MaxAttempts: 2, Timeout: 10 * time.Second, MaxServerWait: 2 * time.Second,
			Backoff:         &Backoff{Kind: BackoffFullJitter, Base: 50 * time.Millisecond, Max: 500 * time.Millisecond},
			OverloadBackoff: &Backoff{Kind: BackoffFullJitter, Base: 250 * time.Millisecond, Max: time.Second}}
	}},
	{PresetBackground, "recoil.Background(): 6 attempts, waits from 1 s to a minute, half the default share", func() Spec {
		return Spec{MaxAttempts: 6, Priority: PriorityBackground, MaxServerWait: 10 * time.Minute,
			Backoff:         &Backoff{Kind: BackoffFullJitter, Base: time.Second, Max: time.Minute},
			OverloadBackoff: &Backoff{Kind: BackoffFullJitter, Base: 5 * time.Second, Max: 5 * time.Minute},
			Budget:          &Budget{Kind: BudgetShare, Percent: 0.1, Reserve: 20}}
	}},
}

// Presets returns the preset names, in the order they are usually compared
// in: from the hastiest retry loop to recoil's default.
func Presets() []string {
	names := make([]string, len(presets))
	for i, p := range presets {
		names[i] = p.name
	}
	return names
}

// Preset returns the named preset as a new Spec, named after it: its
// pointers are its own, so changing it changes no other.
func Preset(name string) (Spec, error) {
	for _, p := range presets {
		if p.name == name {
			s := p.spec()
			s.Name = name
			return s, nil
		}
	}
	return Spec{}, fmt.Errorf("%w %q (want one of %s)", ErrUnknownPreset, name, strings.Join(Presets(), ", "))
}

// PresetAbout says what the named preset is, in a line; "" for a name
// that is not a preset.
func PresetAbout(name string) string {
	for _, p := range presets {
		if p.name == name {
			return p.about
		}
	}
	return ""
}
