package budget

import (
	"errors"

	"github.com/recoil-go/recoil/internal/config"
)

// ErrConfig is wrapped by every error the constructors of this package
// return: a field of the configuration is out of range.
// errors.Is(err, ErrConfig) tests for it; errors.As with a *ConfigError
// names the field.
var ErrConfig = errors.New("budget: invalid configuration")

// ConfigError reports the configuration field a constructor refused: its
// Field ("RatioConfig.TTL"), the Value refused, what the field accepts
// (Want), and ErrConfig as Err. It is one type shared by the recoil
// packages that validate a configuration (breaker, budget, limit), so
// errors.As with any of their ConfigError types catches each of them.
type ConfigError = config.Error

// Must returns b if err is nil and panics with err otherwise. It wraps a
// call of a constructor with a literal configuration, where a refusal is a
// programming error:
//
//	var quota = budget.Must(budget.NewQuota(budget.Quota2026()))
func Must[T *TokenBucket | *Share | *Ratio | *Quota | *Adaptive | *Rate](b T, err error) T {
	return config.Must(b, err)
}

// invalid returns the error refusing value for field.
func invalid(field string, value any, want string) error {
	return &ConfigError{Field: field, Value: value, Want: want, Err: ErrConfig}
}
