// Package exits holds, written anew, start-up retries whose deadline ends
// the process through the program's own exit helper.
package exits

import (
	"errors"
	"net/http"
	"time"

	"exithelp"
)

// Config is the user's: nothing here sets it.
type Config struct {
	Addr    string
	Timeout time.Duration
	Retry   time.Duration
}

func register(addr string) error {
	resp, err := http.Post(addr+"/register", "text/plain", nil)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return errors.New(resp.Status)
	}
	return nil
}

// startBackend registers until the deadline, then exits: bounded by the
// clock, but every failure, a 403 or a 429 alike, is asked again on the
// same beat by every instance.
//
// case: flag nojitter unclassified retryafter
func startBackend(cfg *Config) {
	deadline := time.Now().Add(cfg.Timeout)
	for { // want `unclassified: retry loop around register retries on every error`
		if err := register(cfg.Addr); err == nil {
			return
		}
		if time.Now().After(deadline) {
			exithelp.Fatal("timeout registering")
		}
		time.Sleep(cfg.Retry) // want `nojitter: this wait in a retry loop` `retryafter: retry loop retries 429 and 503`
	}
}

// startBackendForever only warns when the deadline passes, and goes on.
//
// case: flag nojitter unbounded unclassified retryafter
func startBackendForever(cfg *Config) {
	deadline := time.Now().Add(cfg.Timeout)
	for { // want `unbounded: retry loop has no bound` `unclassified: retry loop around register retries on every error`
		if err := register(cfg.Addr); err == nil {
			return
		}
		if time.Now().After(deadline) {
			exithelp.Warn("still not registered")
		}
		time.Sleep(cfg.Retry) // want `nojitter: this wait in a retry loop` `retryafter: retry loop retries 429 and 503`
	}
}
