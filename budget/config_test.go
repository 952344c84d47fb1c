package budget

import (
	"errors"
	"math"
	"testing"
	"time"
)

func TestConstructorsRefuseBadConfig(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	tests := []struct {
		field string
		f     func() (any, error)
	}{
		{"TokenBucketConfig.MaxTokens", tb(TokenBucketConfig{MaxTokens: -1})},
		{"TokenBucketConfig.MaxTokens", tb(TokenBucketConfig{MaxTokens: 1000.5})},
		{"TokenBucketConfig.MaxTokens", tb(TokenBucketConfig{MaxTokens: nan})},
		{"TokenBucketConfig.MaxTokens", tb(TokenBucketConfig{MaxTokens: inf})},
		{"TokenBucketConfig.TokenRatio", tb(TokenBucketConfig{TokenRatio: -0.1})},
		{"TokenBucketConfig.TokenRatio", tb(TokenBucketConfig{TokenRatio: nan})},
		{"TokenBucketConfig.TokenRatio", tb(TokenBucketConfig{TokenRatio: inf})},
		{"RatioConfig.TTL", ratio(RatioConfig{TTL: -time.Second})},
		{"RatioConfig.MinRetriesPerSec", ratio(RatioConfig{TTL: time.Hour, MinRetriesPerSec: math.MaxInt32})},
		{"RatioConfig.Percent", ratio(RatioConfig{Percent: 1000.5})},
		{"RatioConfig.Percent", ratio(RatioConfig{Percent: nan})},
		{"RatioConfig.Percent", ratio(RatioConfig{Percent: inf})},
		{"QuotaConfig.Capacity", quota(QuotaConfig{Capacity: maxQuota + 1})},
		{"QuotaConfig.RetryCost", quota(QuotaConfig{RetryCost: maxQuota + 1})},
		{"QuotaConfig.TimeoutCost", quota(QuotaConfig{TimeoutCost: maxQuota + 1})},
		{"QuotaConfig.ThrottleCost", quota(QuotaConfig{ThrottleCost: maxQuota + 1})},
		{"QuotaConfig.NoRetryIncrement", quota(QuotaConfig{NoRetryIncrement: maxQuota + 1})},
		{"AdaptiveConfig.K", adaptive(AdaptiveConfig{K: -1})},
		{"AdaptiveConfig.K", adaptive(AdaptiveConfig{K: nan})},
		{"AdaptiveConfig.K", adaptive(AdaptiveConfig{K: inf})},
		{"AdaptiveConfig.Window", adaptive(AdaptiveConfig{Window: -time.Second})},
	}
	for _, tt := range tests {
		v, err := tt.f()
		var ce *ConfigError
		if !errors.Is(err, ErrConfig) || !errors.As(err, &ce) || ce.Field != tt.field {
			t.Errorf("%s: error = %v, want a %s error wrapping ErrConfig", tt.field, err, tt.field)
		}
		if v != nil {
			t.Errorf("%s: value = %v, want nil", tt.field, v)
		}
	}
}

// TestMustPanics checks Must on each budget's constructor.
func TestMustPanics(t *testing.T) {
	for name, f := range map[string]func(){
		"TokenBucket": func() { Must(NewTokenBucket(TokenBucketConfig{MaxTokens: -1})) },
		"Ratio":       func() { Must(NewRatio(RatioConfig{TTL: -1})) },
		"Quota":       func() { Must(NewQuota(QuotaConfig{Capacity: maxQuota + 1})) },
		"Adaptive":    func() { Must(NewAdaptive(AdaptiveConfig{Window: -1})) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Must(New%s(bad config)) did not panic", name)
				}
			}()
			f()
		}()
	}
}

// The constructors as func() (any, error), with a nil pointer as a nil any.
func tb(c TokenBucketConfig) func() (any, error) {
	return func() (any, error) { return nonNil(NewTokenBucket(c)) }
}

func ratio(c RatioConfig) func() (any, error) {
	return func() (any, error) { return nonNil(NewRatio(c)) }
}

func quota(c QuotaConfig) func() (any, error) {
	return func() (any, error) { return nonNil(NewQuota(c)) }
}

func adaptive(c AdaptiveConfig) func() (any, error) {
	return func() (any, error) { return nonNil(NewAdaptive(c)) }
}

func nonNil[T any](p *T, err error) (any, error) {
	if p == nil {
		return nil, err
	}
	return p, err
}
