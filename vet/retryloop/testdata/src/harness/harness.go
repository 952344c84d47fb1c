// Package harness holds, written anew, a test harness's readiness wait
// that lives outside a _test.go file, and the same loop in code a
// service runs.
package harness

import (
	"net/http"
	"testing"
	"time"
)

// Wait asks the client under test for its headers until it answers: test
// support, checked only under -testfiles.
//
// case: clean
func Wait(t *testing.T, url string, attempts int) { // want Wait:`remote=1 waits=true deaf=true jitter=1`
	for a := 0; a < attempts; a++ {
		if resp, err := http.Head(url); err == nil {
			resp.Body.Close()
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("no answer from %s in %d attempts", url, attempts)
}

// Ping is Wait in a service: its constant pause is a retry's.
//
// case: flag nojitter
func Ping(url string, attempts int) error { // want Ping:`remote=1 waits=true deaf=true jitter=1`
	var err error
	for a := 0; a < attempts; a++ {
		var resp *http.Response
		if resp, err = http.Head(url); err == nil {
			resp.Body.Close()
			return nil
		}
		time.Sleep(100 * time.Millisecond) // want `nojitter: this wait in a retry loop has a constant or purely exponential duration`
	}
	return err
}
