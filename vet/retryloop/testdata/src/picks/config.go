package picks

import (
	"context"
	"errors"
	"flag"
	"math/rand/v2"
	"time"
)

// Config is an agent's configuration.
type Config struct {
	RetryInterval time.Duration // want RetryInterval:"setting kind=1 bydefault=true caller=false"
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

// Backoff says how long to wait after failed attempt n.
type Backoff func(n int) time.Duration

// NewConstantBackoff waits d after every failed attempt.
func NewConstantBackoff(d time.Duration) Backoff {
	return func(n int) time.Duration {
		if n <= 0 {
			return 0
		}
		return d
	}
}

// ClientConfig configures a reconnecting client.
type ClientConfig struct {
	ReconnectBackoff Backoff
	RetryDelay       time.Duration
}

// Complete fills in the defaults the user left out.
func (c *ClientConfig) Complete() {
	if c.ReconnectBackoff == nil {
		if c.RetryDelay == 0 {
			c.ReconnectBackoff = NewConstantBackoff(10 * time.Second)
		} else {
			c.ReconnectBackoff = NewConstantBackoff(c.RetryDelay)
		}
	}
}

// The func field's default is the constant the constructor closes over:
// 10 s, or the user's one delay, after every failure alike.
//
// case: flag nojitter
func reconnect(ctx context.Context, c *ClientConfig, dial func(context.Context) error) error {
	for attempt := 0; ; attempt++ {
		if attempt > 0 {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(c.ReconnectBackoff(attempt)): // want `nojitter: this wait in a retry loop has a constant or purely exponential duration by default`
			}
		}
		if err := dial(ctx); err == nil {
			return nil
		}
	}
}

// NewJitterBackoff waits a random time up to d, doubling.
func NewJitterBackoff(d time.Duration) Backoff {
	return func(n int) time.Duration {
		return time.Duration(rand.Int64N(int64(d << min(n, 10))))
	}
}

// JitterConfig's default backoff is randomised.
type JitterConfig struct{ Backoff Backoff }

// NewJitterConfig gives the default.
func NewJitterConfig() *JitterConfig {
	return &JitterConfig{Backoff: NewJitterBackoff(time.Second)}
}

// case: clean
func reconnectJittered(ctx context.Context, c *JitterConfig, dial func(context.Context) error) error {
	for attempt := 0; ; attempt++ {
		if err := dial(ctx); err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(c.Backoff(attempt)):
		}
	}
}
