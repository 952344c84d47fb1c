// Package throughcfg is a client's settings package for package through:
// a wait function of its own and a settings struct the user fills in.
package throughcfg

import (
	"math"
	"time"
)

// WaitFunc says how long to wait before retry n.
type WaitFunc func(n int) time.Duration

// Doubling waits 2^n seconds.
func Doubling(n int) time.Duration {
	return time.Duration(math.Pow(2, float64(n))) * time.Second
}

// Settings are the user's.
type Settings struct {
	Retries int
	Wait    WaitFunc
}

// Retryable says whether a status may change on a retry: 429 and the 5xx
// but 501.
func Retryable(code int) bool {
	if code == 501 {
		return false
	}
	return code == 429 || code >= 500
}
