package picks

import (
	"errors"
	"flag"
	"time"
)

// Config is an agent's configuration.
type Config struct {
	RetryInterval time.Duration
	RetryMax      int
}

// DefaultConfig gives the interval its default.
func DefaultConfig() *Config {
	return &Config{RetryInterval: 30 * time.Second}
}

// ReadFlags sets what the user wrote over the default.
func ReadFlags(c *Config, fs *flag.FlagSet) error {
	raw := fs.Lookup("retry-interval")
	if raw == nil {
		return nil
	}
	d, err := time.ParseDuration(raw.Value.String())
	if err != nil {
		return err
	}
	c.RetryInterval = d
	return nil
}

// The interval is 30 s unless the user writes another: constant by
// default, and nothing randomises it.
//
// case: flag nojitter
func retryJoin(c *Config, join func() error) error {
	for attempt := 1; ; attempt++ {
		err := join()
		if err == nil {
			return nil
		}
		if c.RetryMax > 0 && attempt >= c.RetryMax {
			return errors.New("gave up joining")
		}
		time.Sleep(c.RetryInterval) // want `nojitter: this wait in a retry loop has a constant or purely exponential duration by default`
	}
}
